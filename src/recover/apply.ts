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
import { type PulumiCli, runPulumi } from "./pulumi";
import { RecoverError, type StackReading } from "./stack";

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
  /** Release the lock first (every holder is a run of this machine that is gone). */
  releaseLock: boolean;
  /** The export to import; undefined when the stack has no pending operation (a dead lock is all there was). */
  document: StackExport | undefined;
  targets: string[];
}

/** Runs the recovery's steps in turn; `progress` says each. A failure says which steps were done. */
export async function applyRecovery(cli: PulumiCli, stack: string, recovery: Recovery, progress: (line: string) => void): Promise<void> {
  const done: string[] = [];
  const step = async (what: string, args: string[], input?: string) => {
    progress(`${what}: pulumi ${args.filter((arg) => !arg.startsWith("urn:")).join(" ")}`);
    try {
      await runPulumi(cli, [...args, "--stack", stack], input);
    } catch (error) {
      const before = done.length > 0 ? ` (done before it: ${done.join("; ")})` : " (nothing was changed)";
      throw new RecoverError(`${(error as Error).message}${before}`);
    }
    done.push(what);
  };
  if (recovery.releaseLock) await step("releasing the killed run's lock", ["cancel", "--yes"]);
  if (recovery.document)
    await step("recording the objects and clearing the pending operations", ["stack", "import"], JSON.stringify(recovery.document));
  if (recovery.targets.length > 0)
    await step(`refreshing ${recovery.targets.length} resource${recovery.targets.length === 1 ? "" : "s"}`, [
      "refresh",
      "--yes",
      "--skip-preview",
      ...recovery.targets.flatMap((urn) => ["--target", urn]),
    ]);
}
