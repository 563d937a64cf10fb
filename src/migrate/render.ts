/**
 * The files and the summary a migration plan is written as: the import file (JSON as `pulumi import --file`
 * reads it), the delete script (`pulumi state delete` lines, dependents first), and the text the command prints.
 * None of them holds a secret's value: the plan has none.
 */
import type { MigrationPlan } from "./plan";

export const renderImportFile = (plan: MigrationPlan): string => `${JSON.stringify(plan.importFile, null, 2)}\n`;

/** `value` as one single-quoted shell word. */
export const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

export interface ScriptOptions {
  /** The import file the script follows, as the comment names it. */
  importFile: string;
  /** `--stack` for every command; left out, the CLI's current stack. */
  stack?: string;
}

/** A POSIX shell script removing the dynamic URNs from state, dependents first; it stops at the first failure. */
export function renderDeleteScript(plan: MigrationPlan, options: ScriptOptions): string {
  const protectedUrns = new Set(plan.migrated.filter((resource) => resource.protect).map((resource) => resource.urn));
  const stack = options.stack ? ` --stack ${shellQuote(options.stack)}` : "";
  return [
    "#!/bin/sh",
    `# Removes from the stack's state the ${plan.deleteOrder.length} dynamic gms resource(s) that`,
    `#   pulumi import --file ${options.importFile} --protect=false --generate-code=false --yes`,
    "# has imported as native gms:index:<Kind> resources. Run it only after that import succeeded. Dependents",
    "# come first: `pulumi state delete` refuses to remove a resource that another depends on. Written by pulumi-gms migrate.",
    "set -eu",
    ...plan.deleteOrder.map((urn) => `pulumi state delete ${shellQuote(urn)} --yes${protectedUrns.has(urn) ? " --force" : ""}${stack}`),
    "",
  ].join("\n");
}

export interface SummaryPaths {
  importFile: string;
  deleteScript: string;
  stack?: string;
}

/** What the command prints: what it wrote, what stays dynamic and why, and the steps that follow. */
export function renderSummary(plan: MigrationPlan, paths: SummaryPaths): string {
  const stack = paths.stack ? ` --stack ${shellQuote(paths.stack)}` : "";
  const lines = [
    `Wrote ${paths.importFile}: ${plan.migrated.length} native gms resource(s) to import (parents and dependencies first):`,
    ...plan.migrated.map(
      (resource) =>
        `  ${resource.urn}\n    -> ${resource.nativeUrn}\n       import id ${resource.importId}` +
        (resource.outputsSupplied ? ", recorded outputs supplied" : ""),
    ),
    `Wrote ${paths.deleteScript}: \`pulumi state delete\` of those ${plan.deleteOrder.length} dynamic URN(s), dependents first.`,
  ];
  if (plan.deferred.length > 0)
    lines.push(
      `${plan.deferred.length} gms resource(s) stay dynamic (neither imported nor removed); settle them and run this command again on a new export:`,
      ...plan.deferred.map((resource) => `  ${resource.urn}: ${resource.reason}`),
    );
  if (plan.notes.length > 0) lines.push("Notes:", ...plan.notes.map((note) => `  ${note}`));
  lines.push(
    "Next:",
    `  1. pulumi import --file ${shellQuote(paths.importFile)} --protect=false --generate-code=false --yes${stack}`,
    `  2. sh ${shellQuote(paths.deleteScript)}`,
    "  3. in the program, the native classes in place of the dynamic ones (same names, parents and inputs); `pulumi preview` then shows no change",
  );
  return `${lines.join("\n")}\n`;
}
