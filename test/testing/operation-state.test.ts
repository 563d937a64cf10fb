/**
 * An operation's state books (src/testing/operation-state.ts) over a recording store, without a program, provider
 * host, child process or file: what each checkpoint holds, that checkpoints asked for meanwhile share one write, and
 * that a journaled create is settled in the checkpoint that records its object, never before it.
 */
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/provider/clock";
import { type StateStore, OperationState } from "../../src/testing/operation-state";
import type { PendingCreate, ResourceState, Snapshot } from "../../src/testing/state";
import { resource, urn } from "./app-resource";

const clock: Clock = { now: () => Date.UTC(2025, 0, 2, 3, 4, 5), sleep: async () => undefined };

/** A store that records what it is asked; `hold` makes each save wait until `release`. */
class RecordingStore implements StateStore {
  readonly saved: Snapshot[] = [];
  readonly finished: Snapshot[] = [];
  readonly creates: PendingCreate[] = [];
  /** Settled intents, each with how many checkpoints were asked for before it. */
  readonly settled: { intent: string; afterSaves: number }[] = [];
  readonly canStoreSecrets = true;
  readonly bytesWritten = 42;
  hold = false;
  private waiting: (() => void)[] = [];

  constructor(private readonly loaded: Snapshot | Error) {}

  async load(): Promise<Snapshot> {
    if (this.loaded instanceof Error) throw this.loaded;
    return this.loaded;
  }
  async save(snapshot: Snapshot): Promise<void> {
    this.saved.push(structuredClone(snapshot));
    if (this.hold) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  async finish(snapshot: Snapshot): Promise<void> {
    this.finished.push(structuredClone(snapshot));
  }
  async creating(create: PendingCreate): Promise<void> {
    this.creates.push(create);
  }
  settle(intent: string): void {
    this.settled.push({ intent, afterSaves: this.saved.length });
  }
  release(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

const loaded = async (resources: ResourceState[], outputs = {}) => {
  const store = new RecordingStore({ resources, outputs });
  const state = new OperationState(store, clock);
  await state.load();
  return { store, state };
};

describe("OperationState", () => {
  it("finds a registration's old object, passing over a replaced one awaiting deletion", async () => {
    const pending = resource("a", { id: "guid-old", pendingReplacement: true });
    const current = resource("a");
    const { state } = await loaded([pending, current, resource("b")], { url: "x" });
    expect(state.old(urn("a"))).toBe(current);
    expect(state.old(urn("c"))).toBeUndefined();
    expect(state.previous).toHaveLength(3);
    expect(state.outputs).toEqual({ url: "x" });
    expect(state.canStoreSecrets).toBe(true);
    expect(state.bytesWritten).toBe(42);
  });

  it("checkpoints this run's resources in the program's order, then the previous ones not dealt with", async () => {
    const [kept, replaced, deleted, untouched] = ["kept", "replaced", "deleted", "untouched"].map((name) => resource(name));
    const { store, state } = await loaded([kept!, replaced!, deleted!, untouched!]);
    state.setFate(kept!, "kept");
    state.setFate(replaced!, "replaced");
    state.setFate(deleted!, "deleted");
    state.remember(resource("second"), 2);
    state.remember(resource("unplaced"), undefined);
    state.record(resource("first"), 1);
    state.outputs = { done: true };
    await state.save();
    expect(store.saved[0]!.resources.map((each) => [each.name, each.pendingReplacement ?? false])).toEqual([
      ["first", false],
      ["second", false],
      ["unplaced", false],
      ["replaced", true],
      ["untouched", false],
    ]);
    expect(store.saved[0]!.outputs).toEqual({ done: true });
    expect(state.fate(replaced!)).toBe("replaced");
    expect(state.fate(untouched!)).toBeUndefined();
  });

  it("hands the store the same pending copy of a replaced object at every checkpoint, so it is written once", async () => {
    const replaced = resource("r");
    const store = new RecordingStore({ resources: [replaced], outputs: {} });
    const snapshots: Snapshot[] = [];
    store.save = async (snapshot) => void snapshots.push(snapshot);
    const state = new OperationState(store, clock);
    await state.load();
    state.setFate(replaced, "replaced");
    await state.save();
    await state.save();
    expect(snapshots[0]!.resources[0]).toEqual({ ...replaced, pendingReplacement: true });
    expect(snapshots[1]!.resources[0]).toBe(snapshots[0]!.resources[0]);
  });

  it("lets checkpoints asked for while one is written share the next write, which holds all of them", async () => {
    const { store, state } = await loaded([]);
    store.hold = true;
    const first = state.save();
    await Promise.resolve();
    state.remember(resource("a"), 0);
    const second = state.save();
    state.remember(resource("b"), 1);
    const third = state.save();
    expect(third).toBe(second);
    store.release();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    store.release();
    await Promise.all([second, third]);
    expect(store.saved.map((snapshot) => snapshot.resources.map((each) => each.name))).toEqual([[], ["a", "b"]]);
  });

  it("a failed checkpoint fails those that share it, and not the next", async () => {
    const { store, state } = await loaded([]);
    let fail = true;
    store.save = async () => {
      if (fail) throw new Error("disk full");
    };
    await expect(state.save()).rejects.toThrow("disk full");
    fail = false;
    await expect(state.save()).resolves.toBeUndefined();
  });

  it("journals a create before it is sent and settles it with the checkpoint that records its object", async () => {
    const { store, state } = await loaded([]);
    const { id: _id, outputs: _outputs, ...pending } = resource("a");
    const intent = await state.creating(pending);
    expect(store.creates).toEqual([{ id: intent, resource: pending, at: "2025-01-02T03:04:05.000Z" }]);
    const made = resource("a");
    state.created(made, intent);
    expect(store.settled).toEqual([]);
    state.record(made, 0);
    await state.save();
    expect(store.settled).toEqual([{ intent, afterSaves: 0 }]);
    expect(store.saved[0]!.resources).toEqual([made]);
    const other = await state.creating(pending);
    expect(other).not.toBe(intent);
    state.settle(other);
    expect(store.settled.map((each) => each.intent)).toEqual([intent, other]);
  });

  it("deletes at the end of `up` what was replaced or is no longer declared, in the previous state's order", async () => {
    const [declared, dropped, replaced, pending] = ["declared", "dropped", "replaced", "pending"].map((name) => resource(name));
    pending!.pendingReplacement = true;
    const { state } = await loaded([declared!, dropped!, replaced!, pending!]);
    for (const each of [declared!, replaced!, pending!]) state.declared(each.urn);
    state.setFate(declared!, "kept");
    state.setFate(replaced!, "replaced");
    expect(state.leftOver().map((each) => each.name)).toEqual(["dropped", "replaced", "pending"]);
  });

  it("writes the state file at the end only when the state was loaded", async () => {
    const { store, state } = await loaded([resource("a")]);
    await state.finish();
    expect(store.finished.map((snapshot) => snapshot.resources.map((each) => each.name))).toEqual([["a"]]);
    const unreadable = new RecordingStore(new Error("BAD_STATE"));
    const failed = new OperationState(unreadable, clock);
    await expect(failed.load()).rejects.toThrow("BAD_STATE");
    await failed.finish();
    expect(unreadable.finished).toEqual([]);
  });
});
