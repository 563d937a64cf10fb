/**
 * The state books of one operation of LocalEngine: the previous state, the resources this run recorded (in the
 * program's order), how each previous resource fared (kept, replaced, deleted), the URNs the program declared,
 * the stack outputs, the creates journaled before they are sent and their settlement in the checkpoint that
 * records them, and the checkpoints themselves, coalesced. Which step to take is the planner's (planner.ts);
 * how the state is stored is StateFile's (state.ts).
 */
import { randomUUID } from "node:crypto";
import type { Clock } from "../provider/clock";
import { type Fate, leftOver } from "./planner";
import type { Props } from "./properties";
import type { ResourceState, Snapshot, StateFile } from "./state";

/** What the books need of the state's storage (a StateFile; a recording fake in unit tests). */
export type StateStore = Pick<StateFile, "load" | "save" | "finish" | "creating" | "settle" | "canStoreSecrets" | "bytesWritten">;

/**
 * Writes asked for while one is being written share the next one: it is taken when its turn comes, so it holds
 * everything asked for until then.
 */
class CoalescedWrites {
  private queued: Promise<void> | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly write: () => Promise<void>) {}

  run(): Promise<void> {
    if (!this.queued) {
      const queued = this.last.then(() => {
        this.queued = undefined;
        return this.write();
      });
      this.queued = queued;
      this.last = queued.catch(() => undefined);
    }
    return this.queued;
  }
}

export class OperationState {
  private previousResources: ResourceState[] = [];
  /** Resources registered (or refreshed) by this run, with their place in the program (or the previous state). */
  private readonly next: { order: number; resource: ResourceState }[] = [];
  private readonly fates = new Map<ResourceState, Fate>();
  private readonly pendingCopies = new Map<ResourceState, ResourceState>();
  /** The journaled create intent of each resource this run created, settled when it is recorded. */
  private readonly intents = new Map<ResourceState, string>();
  /** URNs registered by this run's program. */
  private readonly registered = new Set<string>();
  private stackOutputs: Props = {};
  private loaded = false;
  private readonly checkpoints = new CoalescedWrites(() => this.store.save(this.snapshot()));

  constructor(
    private readonly store: StateStore,
    private readonly clock: Clock,
  ) {}

  async load(): Promise<Snapshot> {
    const snapshot = await this.store.load();
    this.previousResources = snapshot.resources;
    this.stackOutputs = snapshot.outputs;
    this.loaded = true;
    return snapshot;
  }

  get previous(): readonly ResourceState[] {
    return this.previousResources;
  }

  /** The old state of a registration's resource: the previous object of its URN that is not a replaced one awaiting deletion. */
  old(urn: string): ResourceState | undefined {
    return this.previousResources.find((resource) => resource.urn === urn && !resource.pendingReplacement);
  }

  fate(old: ResourceState): Fate | undefined {
    return this.fates.get(old);
  }

  setFate(old: ResourceState, fate: Fate): void {
    this.fates.set(old, fate);
  }

  /** The program declared `urn`: its previous resource is not left over. */
  declared(urn: string): void {
    this.registered.add(urn);
  }

  /** What the end of `up` (and preview) deletes (planner.ts's leftOver). */
  leftOver(): ResourceState[] {
    return leftOver(this.previousResources, (old) => this.fates.get(old), this.registered);
  }

  get outputs(): Props {
    return this.stackOutputs;
  }

  set outputs(outputs: Props) {
    this.stackOutputs = outputs;
  }

  get canStoreSecrets(): boolean {
    return this.store.canStoreSecrets;
  }

  get bytesWritten(): number {
    return this.store.bytesWritten;
  }

  /** A resource of this run's state, in the program's order (those without a place after the others, as they came). */
  remember(resource: ResourceState, order: number | undefined): void {
    this.next.push({ order: order ?? Number.MAX_SAFE_INTEGER, resource });
  }

  /** Journals a create before it is sent, so that the next run knows of it if this process dies first; answers its intent. */
  async creating(resource: Omit<ResourceState, "id" | "outputs">): Promise<string> {
    const intent = randomUUID();
    await this.store.creating({ id: intent, resource, at: new Date(this.clock.now()).toISOString() });
    return intent;
  }

  /** The created object of a journaled create: the intent is settled in the checkpoint that records it (`record`). */
  created(resource: ResourceState, intent: string): void {
    this.intents.set(resource, intent);
  }

  /** A journaled create is settled without its object recorded by `record`: it made nothing, or was remembered as partial. */
  settle(intent: string): void {
    this.store.settle(intent);
  }

  /** Remembers a registered resource's new state, settling its create in the same checkpoint, never before it. */
  record(resource: ResourceState, order: number | undefined): void {
    this.remember(resource, order);
    const intent = this.intents.get(resource);
    if (intent) this.store.settle(intent);
  }

  /** A checkpoint (the state journal's entries for what changed), as the engine checkpoints after each step. */
  save(): Promise<void> {
    return this.checkpoints.run();
  }

  /** The end of the operation: the state file written once, from what was loaded and what happened since. */
  async finish(): Promise<void> {
    if (this.loaded) await this.store.finish(this.snapshot());
  }

  /** What the state holds now: this run's resources in the program's order, then the previous ones not yet dealt with. */
  private snapshot(): Snapshot {
    const current = [...this.next].sort((a, b) => a.order - b.order).map((entry) => entry.resource);
    const remaining = this.previousResources
      .filter((resource) => this.fates.get(resource) !== "kept" && this.fates.get(resource) !== "deleted")
      .map((resource) => (this.fates.get(resource) === "replaced" ? this.pending(resource) : resource));
    return { resources: [...current, ...remaining], outputs: this.stackOutputs };
  }

  /** The replaced object awaiting deletion: one object per resource, so checkpoints see it unchanged. */
  private pending(resource: ResourceState): ResourceState {
    let copy = this.pendingCopies.get(resource);
    if (!copy) this.pendingCopies.set(resource, (copy = { ...resource, pendingReplacement: true }));
    return copy;
  }
}
