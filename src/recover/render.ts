/** A recovery report as people read it: one block per pending create, what stops recover, what it did or would do, what next. */
import { describeHolder } from "./lock";
import type { Candidate, CreatePlan } from "./plan";
import { hasWork, type RecoveryReport } from "./report";

const candidateLine = (candidate: Candidate): string =>
  `      ${candidate.guid}  created ${candidate.createdAt ?? "(time not reported)"}` +
  (candidate.doubt ? `; ${candidate.doubt}` : "") +
  (candidate.alsoMatches ? `; matches ${candidate.alsoMatches.join(", ")} too` : "");

/** What the user can do about a create recover leaves to them. */
function advice(plan: CreatePlan, stack: string): string[] {
  const again = `pulumi-gms recover --stack ${stack}`;
  if (plan.outcome === "ambiguous") {
    const one = plan.candidates.length === 1;
    return [
      `    To settle it: \`${again} --choose '${plan.urn}=<GUID>'\` records the object that is this resource's` +
        (one ? "" : " (delete the others in the service, unless something else uses them)") +
        `; \`--choose '${plan.urn}=none'\` drops the create if ${one ? "it is not" : "none is"};` +
        ` or delete what is not this resource's in the service and run \`${again}\` again.`,
    ];
  }
  if (plan.outcome === "unsettled") return ["    Fix that and run recover again."];
  return [];
}

export function renderReport(report: RecoveryReport): string {
  const { stack, lock } = report;
  const lines: string[] = [];
  const creates = report.pendingCreates.length + report.foreignCreates.length;
  if (!hasWork(report) && report.blockers.length === 0) {
    lines.push(`Stack ${stack}: no pending operation and no lock${lock.readable ? "" : " recover can read"}: nothing to recover.`);
    return `${lines.join("\n")}\n`;
  }
  lines.push(
    `Stack ${stack}: ${creates} pending create${creates === 1 ? "" : "s"}` +
      (report.otherOperations.length > 0 ? `, ${report.otherOperations.length} other pending operation(s)` : "") +
      (report.since ? `; the interrupted update began at ${report.since} (its lock)` : "; when the interrupted update began is not known"),
  );
  if (!lock.readable) lines.push(`Lock: not read (${lock.reason}).`);
  else if (lock.holders.length === 0) lines.push("Lock: none.");
  else
    for (const holder of lock.holders)
      lines.push(
        `Lock: ${describeHolder(holder)}: ${{ gone: "gone", running: "still running", elsewhere: "another machine's" }[holder.status]}.`,
      );
  for (const plan of report.pendingCreates) {
    lines.push(`  ${plan.outcome.padEnd(10)} ${plan.kind} ${plan.urn}${plan.id ? ` as ${plan.id}` : ""}`);
    lines.push(`    ${plan.reason}`);
    if (plan.outcome === "ambiguous" || plan.outcome === "unsettled") lines.push(...plan.candidates.map(candidateLine));
    lines.push(...advice(plan, stack));
  }
  for (const plan of report.foreignCreates) {
    lines.push(`  ${plan.outcome.padEnd(10)} ${plan.type} ${plan.urn}${plan.id ? ` as ${plan.id}` : ""}`);
    lines.push(`    ${plan.reason}`);
  }
  for (const operation of report.otherOperations)
    lines.push(`  cleared    ${operation.operation} ${operation.urn}${operation.inState ? " (refreshed)" : ""}`);
  for (const warning of report.warnings) lines.push(`Warning: ${warning}.`);
  if (report.blockers.length > 0) {
    lines.push("Nothing was changed:");
    for (const blocker of report.blockers) lines.push(`  ${blocker}`);
    return `${lines.join("\n")}\n`;
  }
  const settled = [...report.pendingCreates, ...report.foreignCreates];
  const recorded = settled.filter((plan) => plan.outcome === "recorded").length;
  const superseded = settled.filter((plan) => plan.outcome === "superseded").length;
  const records = [
    `${recorded} object${recorded === 1 ? "" : "s"}`,
    ...(superseded > 0 ? [`${superseded} for deletion by the next up`] : []),
  ].join(" and ");
  const steps = [
    ...(lock.release ? ["release the lock (pulumi cancel)"] : []),
    ...(creates + report.otherOperations.length > 0 ? [`record ${records} and clear the pending operations (pulumi stack import)`] : []),
    ...(recorded > 0 || report.otherOperations.some((operation) => operation.inState)
      ? ["refresh what it recorded (pulumi refresh --target)"]
      : []),
  ];
  if (report.applied) lines.push(`Done: ${steps.join(", then ")}.`);
  else lines.push(`Would ${steps.join(", then ")}. Run again with --yes to do it.`);
  if (report.next.length > 0) lines.push(`Next: ${report.next.join("; ")}`);
  return `${lines.join("\n")}\n`;
}
