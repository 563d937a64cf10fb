/**
 * A recovery applied through the CLI: the dead run's lock released (`pulumi cancel`), the export imported with each
 * recorded create's resource added and no pending operation left (`pulumi stack import`, the document on standard
 * input), then what was recorded, and the resources other pending operations were changing, refreshed
 * (`pulumi refresh --target`), so that their records hold the objects as the service has them.
 *
 * Why the export: a pending operation holds its resource exactly as the engine registered it (the URN with its
 * parents' types, the parent, the provider reference, the dependencies, secret inputs as ciphertext), so the record
 * is the engine's own with an id. `pulumi import --file` would rebuild the resource from a name and a type, under the
 * stack or a named parent, with the provider it is told, and cannot import a dynamic resource at all;
 * `pulumi refresh --import-pending-creates <urn> <id>` drops the pending create without recording the object in
 * v3.274.1 (test/pulumi-cli/crash.test.ts pins that). `stack import` clears every pending operation (the CLI drops
 * them on import): that is why recover applies nothing while a create is left unsettled.
 */
import type { StackExport } from "../migrate/stack-export";
import { holdersInRefusal } from "./lock";
import { type PulumiCli, runPulumi } from "./pulumi";
import { RecoverError, type StackReading, StackUnderwayError } from "./stack";

/** How a pending create was settled, gms or not (./plan.ts). */
export interface Settled {
  urn: string;
  outcome: string;
  id?: string | undefined;
}

/**
 * The export to import: each recorded create's resource as the plain export's pending operation holds it, with its
 * object's id and, until the refresh reads the object, its inputs as outputs (a dynamic resource's `__provider` among
 * them, which the refresh and a delete need to reach its provider); a superseded create's the same, marked for
 * deletion (`delete: true`, as the engine marks a replaced object it has yet to delete: the next `up` deletes it);
 * no pending operation.
 */
export function recordedExport(sealed: StackExport, plans: readonly Settled[]): StackExport {
  const pending = sealed.deployment.pending_operations ?? [];
  const added = plans.flatMap((plan) => {
    if ((plan.outcome !== "recorded" && plan.outcome !== "superseded") || plan.id === undefined) return [];
    const operation = pending.find((each) => each.type === "creating" && each.resource.urn === plan.urn);
    if (!operation) throw new RecoverError(`the export has no pending create of ${plan.urn}`);
    const inputs = operation.resource.inputs ?? {};
    return [{ ...operation.resource, id: plan.id, outputs: { ...inputs }, ...(plan.outcome === "superseded" ? { delete: true } : {}) }];
  });
  return {
    ...sealed,
    deployment: { ...sealed.deployment, resources: [...(sealed.deployment.resources ?? []), ...added], pending_operations: [] },
  };
}

/** The URNs the refresh reads: the recorded ones, and those of the stack's resources other pending operations were changing. */
export const refreshTargets = (stack: StackReading, plans: readonly Settled[]): string[] => [
  ...plans.filter((plan) => plan.outcome === "recorded").map((plan) => plan.urn),
  ...stack.otherOperations.filter((operation) => operation.inState).map((operation) => operation.urn),
];

export interface Recovery {
  /** Release the lock first (every holder is a run of this machine that is gone, or the caller vouched for them). */
  releaseLock: boolean;
  /** The export to import; undefined when the stack has no pending operation (a dead lock is all there was). */
  document: StackExport | undefined;
  /** The plain export as recover read it: the stack must still be this when the import goes in. */
  readAs: string;
  targets: string[];
}

/**
 * Runs the recovery's steps in turn; `progress` says each. A failure says which steps were done. Before the import, the
 * stack is exported again: a run that went on meanwhile (recover read a lock it could not see, or a job began after
 * the lock was released) changed it, and the import would undo that run's writes, so recover stops. Where recover
 * could not read the lock (not a file backend), the CLI's refusal of the import names its holders: when each is a run
 * of this machine that is gone, recover releases it and imports again; else nothing was changed (StackUnderwayError).
 */
export async function applyRecovery(cli: PulumiCli, stack: string, recovery: Recovery, progress: (line: string) => void): Promise<void> {
  const done: string[] = [];
  const failed = (error: unknown) => {
    const before = done.length > 0 ? ` (done before it: ${done.join("; ")})` : " (nothing was changed)";
    return new RecoverError(`${(error as Error).message}${before}`, { cause: error });
  };
  const step = async (what: string, args: string[], input?: string) => {
    progress(`${what}: pulumi ${args.filter((arg) => !arg.startsWith("urn:")).join(" ")}`);
    try {
      await runPulumi(cli, [...args, "--stack", stack], input);
    } catch (error) {
      throw failed(error);
    }
    done.push(what);
  };
  const release = () => step("releasing the killed run's lock", ["cancel", "--yes"]);
  if (recovery.releaseLock) await release();
  if (recovery.document) {
    const now = await runPulumi(cli, ["stack", "export", "--stack", stack]).catch((error: unknown) => {
      throw failed(error);
    });
    if (now !== recovery.readAs)
      throw new StackUnderwayError(
        `stack ${stack} changed since recover read it: a run is under way; run recover once it has ended` +
          (done.length > 0 ? ` (done before: ${done.join("; ")})` : " (nothing was changed)"),
        [],
      );
    const record = () =>
      step("recording the objects and clearing the pending operations", ["stack", "import"], JSON.stringify(recovery.document));
    try {
      await record();
    } catch (error) {
      const holders = holdersInRefusal((error as Error).message);
      if (holders.length === 0) throw error;
      // A lock recover released already is another run's now: one that began meanwhile.
      if (recovery.releaseLock || !holders.every((holder) => holder.status === "gone"))
        throw new StackUnderwayError(`the stack is locked by ${holders.length} run(s)`, holders, { cause: error });
      await release();
      await record();
    }
  }
  if (recovery.targets.length > 0)
    await step(`refreshing ${recovery.targets.length} resource${recovery.targets.length === 1 ? "" : "s"}`, [
      "refresh",
      "--yes",
      "--skip-preview",
      ...recovery.targets.flatMap((urn) => ["--target", urn]),
    ]);
}
