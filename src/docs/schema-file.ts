/**
 * `schema.json` as committed: the package schema (src/schema/package-schema.ts) with the repository's example programs
 * at the end of each resource's description. Here, above the schema, so that the schema generator, which the plugin and
 * the migrations load, never loads the example programs.
 */
import { generatePackageSchema } from "../schema/package-schema";
import { examplePrograms, schemaExamples } from "./example-programs";

/** schema.json's text: the schema with the examples, pretty-printed with sorted keys and a trailing newline. */
export function renderPackageSchema(): string {
  const programs = examplePrograms();
  const examples = (token: string) => schemaExamples(programs.filter((program) => program.types.has(token)));
  return `${JSON.stringify(generatePackageSchema({ examples }), null, 2)}\n`;
}
