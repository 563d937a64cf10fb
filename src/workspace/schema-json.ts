/**
 * The JSON Schema of the workspace document, generated from the same zod definitions the component
 * validates with (spec.ts), for editors: with `# yaml-language-server: $schema=<path>` at the top of a
 * workspace file they complete and check it. The package ships the generated file
 * (src/workspace/workspace.schema.json); `npm run workspace-schema` regenerates it, and a test fails
 * when the committed file differs from what this produces. The JSON Schema covers the shape only: the
 * rules across entries (references, duplicates) and the lookups are checked by the component.
 */
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { WorkspaceDocument } from "./spec";

/** The JSON Schema (draft-07, which editors support best) of what a document may contain. */
export function workspaceJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(WorkspaceDocument, { io: "input", target: "draft-7" }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  return { $schema, title: "pulumi-gms workspace", ...rest };
}

/** The file's text: stable formatting so that the committed file can be compared. */
export const workspaceJsonSchemaText = (): string => `${JSON.stringify(workspaceJsonSchema(), null, 2)}\n`;

if (require.main === module) {
  const target = process.argv[2];
  if (!target) {
    process.stderr.write("usage: node dist/workspace/schema-json.js <output file>\n");
    process.exit(2);
  }
  writeFileSync(target, workspaceJsonSchemaText());
  process.stdout.write(`wrote ${target}\n`);
}
