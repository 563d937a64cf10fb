/** A discovery as people read it (the command's summary) and as `pulumi import --file` reads it (the document). */
import { KIND_NAMES } from "../resources";
import type { PlainReference } from "./adopt";
import type { Discovery } from "./plan";

/** `1 object`, `31 objects`. */
export const objects = (count: number): string => `${count} object${count === 1 ? "" : "s"}`;

/** The import document, as `pulumi import --file` reads it. */
export const renderDocument = (discovery: Discovery): string => `${JSON.stringify(discovery.document, null, 2)}\n`;

/** A program written (`--language`, `--split-by`): its folder and file, its project, how many objects it adopts. */
export interface WrittenProject {
  /** Its entry in the stack list, and the entries it depends on (`--split-by`). */
  entry?: string;
  dependsOn?: string[];
  directory: string;
  file: string;
  project: string;
  adopted: number;
}

/**
 * What was written: the import document, or the programs that adopt the workspace (`--language`; `--split-by` with
 * their stack list), which read the keys themselves, and the values they write as GUIDs.
 */
export type Written =
  | { importDocument: string }
  | { language: string; projects: WrittenProject[]; references: PlainReference[]; stackList?: string };

/** The summary: what was listed and written, what was left out and why, what to set and run next. */
export function renderSummary(discovery: Discovery, written: Written): string {
  const lines: string[] = [];
  const { workspace, listed, document, leftOut, configKeys, notes, caveats, language } = discovery;
  const total = KIND_NAMES.reduce((sum, kind) => sum + listed[kind], 0);
  lines.push(`Workspace "${workspace.name}" (${workspace.guid}): ${total} objects.`);
  lines.push(`  ${KIND_NAMES.map((kind) => `${kind} ${listed[kind]}`).join(", ")}`);
  const count = document.resources.length;
  if ("importDocument" in written) lines.push(`Wrote ${written.importDocument}: ${count} to import.`);
  else if (written.stackList === undefined)
    lines.push(
      `Wrote ${written.projects[0]!.file}: a ${written.language} program that adopts ${objects(count)} ` +
        "(its first `pulumi up` imports each, changing nothing).",
    );
  else {
    lines.push(
      `Wrote ${written.projects.length} ${written.language} projects that adopt ${objects(count)}, each its own stack (its first ` +
        `\`pulumi up\` imports each object, changing nothing), and their stack list ${written.stackList}:`,
    );
    const width = Math.max(...written.projects.map((project) => project.file.length));
    for (const project of written.projects)
      lines.push(
        `  ${project.file.padEnd(width)}  ${objects(project.adopted)}${project.dependsOn?.length ? `, reads ${project.dependsOn.join(", ")}` : ""}`,
      );
  }
  const counted = { managed: "already managed by the stack", "not-picked": "not picked by --kind, --name or --exclude" } as const;
  for (const [code, why] of Object.entries(counted)) {
    const entries = leftOut.filter((entry) => entry.code === code);
    if (entries.length > 0) lines.push(`Left out, ${why}: ${entries.length} (--json lists each).`);
  }
  const others = leftOut.filter((entry) => !Object.hasOwn(counted, entry.code));
  if (others.length > 0) {
    lines.push(`Left out: ${others.length}`);
    for (const entry of others) lines.push(`  ${entry.type} "${entry.object}" ${entry.guid}: ${entry.reason}`);
  }
  lines.push(`Not imported: ${discovery.notResources}`);
  if ("references" in written && written.references.length > 0) {
    lines.push(
      `Warning: ${written.references.length} values name objects that the program holding them does not adopt, and are written as ` +
        "their GUIDs (they do not follow a replacement of the object):",
    );
    for (const reference of written.references)
      lines.push(
        `  ${reference.resource}.${reference.property} (${reference.type}) = ${reference.guid}: ${reference.target}, ${reference.why}`,
      );
  }
  if (configKeys.length > 0 && !("importDocument" in written))
    lines.push(
      "Keys the service never returns (the objects keep theirs; the program reads each from a secret config value): the " +
        "commands below set each, saying whose it is.",
    );
  else if (configKeys.length > 0) {
    lines.push(
      "Keys the service never returns (the imported objects keep theirs; a program needs them to create one anew): " +
        `set each as a secret (the CLI asks for the value), then add its line to the code \`pulumi import\` writes${
          language.preamble ? ` (and once: ${language.preamble})` : ""
        }:`,
    );
    const width = Math.max(...configKeys.map((key) => key.setCommand.length));
    for (const key of configKeys) lines.push(`  ${key.setCommand.padEnd(width)}   then   ${key.programLine}   ${key.where}`);
  }
  if (notes.length > 0) {
    lines.push("Notes:");
    for (const note of notes) lines.push(`  ${note.resource} (${note.type}): ${note.note}`);
  }
  if (caveats.length > 0) {
    lines.push("Before a program may delete what it imports:");
    for (const caveat of caveats) lines.push(`  ${caveat.type} (${caveat.resources.length}): ${caveat.caveat}`);
    lines.push(
      "importDocument" in written
        ? "  `pulumi import` protects what it imports (unless --protect=false): keep that on what you mean to keep."
        : "  The program does not protect what it adopts: give what you mean to keep the `protect` resource option.",
    );
  }
  if (language.assumed) lines.push(`Lines are written for ${language.runtime}: ${language.assumed}.`);
  lines.push("Next:");
  for (const command of discovery.next) lines.push(`  ${command}`);
  if (language.runtime === "yaml" && "importDocument" in written)
    lines.push("  (the resources `pulumi import --out` writes go under `resources:` in Pulumi.yaml)");
  return `${lines.join("\n")}\n`;
}
