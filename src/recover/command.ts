/**
 * The run of `pulumi-gms recover` (src/cli/recover.ts parses its flags and maps the outcome to an exit code): read the stack twice (revealed in memory for
 * the lookups, sealed for the import), read its lock, look each pending create's object up with its kind's lookup,
 * plan, and with `--yes` apply. Everything printed goes through a filter that blanks every secret of the stack and
 * the environment's API key.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { urnParts } from "../migrate/stack-export";
import { redactSecrets } from "../provider/errors";
import { applyRecovery, recordedExport, refreshTargets } from "./apply";
import { isBucketBackend, lockedSince, type Locks, locksFromRenameRefusal, readLocks } from "./lock";
import { type CreateLookup, CreateLookups } from "./lookup";
import { planForeign, planRecovery } from "./plan";
import { type PulumiCli, runPulumi } from "./pulumi";
import { renderReport } from "./render";
import { hasWork, lockBlocker, lockReport, type RecoveryReport, reportOf } from "./report";
import { readStack, type StackReading, StackUnderwayError } from "./stack";

/** What the command's flags ask for (src/cli/recover.ts reads them). */
export interface RecoverSettings {
  stack: string;
  /** Apply the plan; without it recover prints what it would do and changes nothing. */
  yes: boolean;
  /** The Pulumi CLI to run. */
  pulumi: string;
  json: boolean;
  /** `--choose URN=GUID` (null: `URN=none`). */
  choices: Map<string, string | null>;
  /** `--release-lock`: the caller vouches that every run holding the stack's lock is gone. */
  releaseLock: boolean;
}

/**
 * The lock of the stack, where its backend lets recover read it: a file backend's lock files, or a bucket's locks as
 * the CLI names them when it refuses to rename the stack to its own name (./lock.ts). A file backend keeps them under
 * the stack's project: the project of its resources' URNs, or, for a stack whose checkpoint holds none yet (its first
 * run killed before its first step, or one that skipped checkpoints), the one the CLI names in the stack's fully
 * qualified name (`organization/<project>/<stack>`), as it resolves the stack in this folder.
 */
async function locksOf(cli: PulumiCli, stack: StackReading): Promise<Locks> {
  const { url } = JSON.parse(await runPulumi(cli, ["whoami", "--json"])) as { url: string };
  if (isBucketBackend(url)) {
    const rename = ["stack", "rename", stack.stack, "--stack", stack.stack];
    return locksFromRenameRefusal(
      await runPulumi(cli, rename).then(
        (said) => said,
        (error: unknown) => (error as Error).message,
      ),
    );
  }
  const urn = stack.sealed.deployment.resources?.[0]?.urn ?? stack.sealed.deployment.pending_operations?.[0]?.resource.urn;
  if (urn !== undefined) return readLocks(url, urnParts(urn).project, stack.stack, cli.cwd);
  const name = await runPulumi(cli, ["stack", "--show-name", "--fully-qualify-stack-names", "--stack", stack.stack]);
  const parts = name.trim().split("/");
  return readLocks(url, parts.length === 3 ? parts[1] : undefined, stack.stack, cli.cwd);
}

/**
 * Every pending create's lookup; when one found nothing while a create the interrupted run had in flight may still
 * land (./window.ts), after waiting for that, every lookup again. Not when the lock stops recover (`busy`: a run still
 * going, or another machine's): recover changes nothing then, so what the lookups find is only reported.
 */
async function lookUpSettled(
  lookups: CreateLookups,
  progress: (line: string) => void,
  plan: (found: CreateLookup[]) => string[],
  busy: boolean,
) {
  const found = await lookups.lookUpAll();
  if (busy) return found;
  const empty = new Set(plan(found));
  const due = Math.max(0, ...found.filter((each) => empty.has(each.urn)).map((each) => each.landedBy ?? 0));
  const wait = due - Date.now();
  if (wait <= 0) return found;
  progress(
    `waiting ${Math.ceil(wait / 1000)} s before dropping ${empty.size} create(s) that found nothing: a create the killed run had in flight ` +
      "may land until the service's deadline for a request (gms:requestDeadlineMs) has passed since its last checkpoint write",
  );
  await sleep(wait);
  return lookups.lookUpAll();
}

/** What the command prints to and reads from: the part of the command-line tool's contract the run needs. */
export interface RecoverIo {
  /** Standard output: the report under `--json`. */
  out(text: string): void;
  /** Standard error: progress lines, the report and failures. */
  err(text: string): void;
  /** The environment: the API key to blank, and what the lookups and the Pulumi CLI read. */
  env: NodeJS.ProcessEnv;
  /** The folder the Pulumi CLI runs in. */
  cwd: string;
}

export async function recoverWith(settings: RecoverSettings, io: RecoverIo): Promise<"done" | "failed"> {
  const secrets: string[] = [];
  if (io.env.GMS_API_KEY) secrets.push(io.env.GMS_API_KEY);
  const blanked = (text: string) => redactSecrets(text, secrets);
  const progress = (line: string) => io.err(blanked(`recover: ${line}\n`));
  const cli: PulumiCli = { bin: settings.pulumi, cwd: io.cwd, env: io.env };
  let lookups: CreateLookups | undefined;
  try {
    progress(`reading stack ${settings.stack} (pulumi stack export)`);
    const exportArgs = ["stack", "export", "--stack", settings.stack];
    const revealedText = await runPulumi(cli, [...exportArgs, "--show-secrets"]);
    const stack = readStack(settings.stack, revealedText, await runPulumi(cli, exportArgs));
    secrets.push(...stack.secrets);
    const locks = await locksOf(cli, stack);
    const lock = lockReport(locks, settings.releaseLock);
    const startedAt = lockedSince(locks, settings.releaseLock);
    lookups = new CreateLookups(stack, io.env, startedAt);
    const plan = (found: CreateLookup[]) => planRecovery({ lookups: found, heldIds: stack.heldIds, choices: settings.choices });
    if (stack.pendingCreates.length > 0) progress(`looking up the objects of ${stack.pendingCreates.length} pending create(s)`);
    const found = await lookUpSettled(
      lookups,
      progress,
      (each) =>
        plan(each)
          .filter((created) => created.outcome === "dropped" && !settings.choices.has(created.urn))
          .map((created) => created.urn),
      lockBlocker(lock, settings.stack) !== undefined,
    );
    // The keys the lookups used are blanked too, secrets in the stack or not.
    secrets.push(...lookups.keys());
    const report: RecoveryReport = reportOf({
      stack: settings.stack,
      lock,
      since: startedAt,
      lastWriteAt: stack.lastWriteAt,
      pendingCreates: plan(found),
      foreignCreates: planForeign(stack.foreignCreates, stack.heldIds, settings.choices),
      otherOperations: stack.otherOperations,
      unknownChoices: [...settings.choices.keys()].filter(
        (urn) => ![...stack.pendingCreates, ...stack.foreignCreates].some((create) => create.urn === urn),
      ),
    });
    if (settings.yes && report.blockers.length === 0 && hasWork(report)) {
      const settled = [...report.pendingCreates, ...report.foreignCreates];
      try {
        await applyRecovery(
          cli,
          settings.stack,
          {
            releaseLock: report.lock.release,
            document: (stack.sealed.deployment.pending_operations ?? []).length > 0 ? recordedExport(stack.sealed, settled) : undefined,
            readAs: stack.sealedText,
            targets: refreshTargets(stack, settled),
          },
          progress,
        );
        report.applied = true;
      } catch (error) {
        if (!(error instanceof StackUnderwayError)) throw error;
        // The CLI named the lock recover could not read (reported as if read), or the stack changed meanwhile.
        if (error.holders.length > 0) report.lock = lockReport({ readable: true, holders: error.holders });
        report.blockers.push(lockBlocker(report.lock, settings.stack) ?? error.message);
        report.underway = true;
        report.next = [];
      }
    }
    if (!hasWork(report)) report.next = [];
    if (settings.json) io.out(blanked(`${JSON.stringify(report, null, 2)}\n`));
    else io.err(blanked(renderReport(report)));
    return report.blockers.length > 0 ? "failed" : "done";
  } catch (error) {
    io.err(blanked(`pulumi-gms recover: ${(error as Error).message ?? String(error)}\n`));
    if (error instanceof StackUnderwayError && settings.json) {
      // Read while another run wrote it: nothing was looked up. A pipeline waits for that run, as for a lock.
      const report = reportOf({
        stack: settings.stack,
        lock: lockReport({ readable: true, holders: error.holders }),
        since: undefined,
        pendingCreates: [],
        foreignCreates: [],
        otherOperations: [],
      });
      Object.assign(report, { blockers: [error.message], underway: true, next: [] });
      io.out(blanked(`${JSON.stringify(report, null, 2)}\n`));
    }
    return "failed";
  } finally {
    await lookups?.close();
  }
}
