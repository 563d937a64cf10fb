/**
 * A create that fails after its object exists, on the real Pulumi CLI: the engine records the resource as
 * partially created (the checkpoint holds it with `initErrors`), the next `up` replaces it without leaving
 * a second object in the service, and `destroy` leaves nothing.
 *
 * Two ways the object outlives its failed create: a ProviderConnection whose nickname cannot be set (PUT
 * fails) and whose undo cannot delete it (DELETE fails), both through the emulator's fault injection; and a
 * FineTune whose job the provider fails (a base model named "...fail...").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineError } from "../../src/testing";
import { cliName, pulumiCliFor } from "./harness";
import { type Declaration, type KindsBed, startKindsBed, stepsByName } from "./kinds-fixtures";

const cli = pulumiCliFor("kinds-partial.test.ts");
const TIMEOUT = 300_000;

describe.skipIf(!cli)(`a create that fails after its object exists, on the real engine: ${cliName(cli)}`, () => {
  let bed: KindsBed;
  let program: (baseModel: string) => Declaration[];
  const connectionsNamed = async (name: string) =>
    ((await bed.api("GET", "/providers")).body.data ?? (await bed.api("GET", "/providers")).body).filter(
      (connection: { name: string }) => connection.name === name,
    ) as { guid: string }[];
  const fineTunesNamed = async (name: string) =>
    ((await bed.api("GET", `/apps/${bed.guids.apps.Support}/finetunes`)).body as { guid: string; name: string }[]).filter(
      (tune) => tune.name === name,
    );

  beforeAll(async () => {
    bed = await startKindsBed(cli!, "kinds-partial");
    const made = await bed.api("POST", "/providers", { provider: "openai", key: "sk-partial-tune-not-secret", name: "tune connection" });
    const connection = await bed.numericId("providers", made.body.guid);
    const dataset = (await bed.api("POST", "/datasets", { name: "Tune set", app: bed.guids.apps.Support })).body.guid;
    program = (baseModel) => [
      {
        kind: "ProviderConnection",
        name: "pc",
        args: { provider: "openai", key: "sk-partial-4f0e", name: "partial", nickname: "Partial" },
      },
      {
        kind: "FineTune",
        name: "tune",
        args: {
          name: "Partial tune",
          app: bed.guids.apps.Support,
          dataset,
          dataIds: bed.data.slice(0, 10).map((d) => d.id),
          baseModel,
          providerConnection: connection,
        },
      },
    ];
  }, TIMEOUT);
  afterAll(() => bed?.close());

  it(
    "records both as partially created (initErrors in the checkpoint), with their objects in the service",
    async () => {
      bed.emulator.faults.set({ error: 1, methods: ["PUT", "DELETE"] });
      let failure: unknown;
      try {
        await bed.run("up", program("gpt-fail-mini"));
      } catch (error) {
        failure = error;
      } finally {
        bed.emulator.faults.set(undefined);
      }
      expect(failure).toBeInstanceOf(EngineError);
      const steps = stepsByName((failure as EngineError).result!);
      expect(steps.pc?.op).toBe("create");
      expect(steps.tune?.op).toBe("create");
      const resources = Object.fromEntries(bed.resources().map((r) => [r.urn.slice(r.urn.lastIndexOf("::") + 2), r]));
      expect(resources.pc?.initErrors?.join("\n")).toMatch(/nickname/);
      expect(resources.tune?.initErrors?.join("\n")).toMatch(/cannot be fine-tuned/);
      expect(resources.pc!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(resources.tune!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await connectionsNamed("partial")).map((c) => c.guid)).toEqual([resources.pc!.id]);
      expect((await fineTunesNamed("Partial tune")).map((t) => t.guid)).toEqual([resources.tune!.id]);
      expect((await bed.api("GET", `/finetune/${resources.tune!.id}`)).body.status).toBe("failed");
    },
    TIMEOUT,
  );

  it(
    "the next `up` replaces them, deleting the partial objects: one object each in the service",
    async () => {
      const partial = Object.fromEntries(bed.resources().map((r) => [r.urn.slice(r.urn.lastIndexOf("::") + 2), r.id!]));
      // The ProviderConnection's program is unchanged; the FineTune's base model now works (a replace-only field
      // too, but a partially created resource is replaced whatever the program says, as the connection shows).
      const result = await bed.run("up", program("gpt-4o-mini"));
      const steps = stepsByName(result);
      expect(steps.pc?.op).toBe("replace");
      expect(steps.tune?.op).toBe("replace");
      const resources = Object.fromEntries(bed.resources().map((r) => [r.urn.slice(r.urn.lastIndexOf("::") + 2), r]));
      for (const name of ["pc", "tune"]) {
        expect(resources[name]!.initErrors, name).toBeUndefined();
        expect(resources[name]!.id, name).not.toBe(partial[name]);
      }
      expect((await connectionsNamed("partial")).map((c) => c.guid)).toEqual([resources.pc!.id]);
      expect((await bed.api("GET", `/providers/${resources.pc!.id}`)).body.nickname).toBe("Partial");
      expect((await bed.api("GET", `/providers/${partial.pc}`)).status).toBe(404);
      expect((await fineTunesNamed("Partial tune")).map((t) => t.guid)).toEqual([resources.tune!.id]);
      expect((await bed.api("GET", `/finetune/${partial.tune}`)).status).toBe(404);

      const again = await bed.run("up", program("gpt-4o-mini"));
      expect(again.steps.map((step) => step.op)).toEqual(["same", "same"]);
    },
    TIMEOUT,
  );

  it(
    "a failed create again, then `destroy`, leaves nothing in the service",
    async () => {
      bed.emulator.faults.set({ error: 1, methods: ["PUT", "DELETE"] });
      // The connection is unchanged; the fine-tune's replacement is a failing job, and DELETE fails too.
      const failing = program("gpt-fail-mini");
      await expect(bed.run("up", failing)).rejects.toBeInstanceOf(EngineError);
      bed.emulator.faults.set(undefined);
      const tunes = await fineTunesNamed("Partial tune");
      expect(tunes.length).toBeGreaterThan(0);
      const destroyed = await bed.run("destroy", failing);
      expect(destroyed.counts.delete).toBeGreaterThan(0);
      expect(bed.resources()).toEqual([]);
      expect(await connectionsNamed("partial")).toEqual([]);
      expect(await fineTunesNamed("Partial tune")).toEqual([]);
    },
    TIMEOUT,
  );
});
