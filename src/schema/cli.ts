/**
 * Writes `schema.json` at the package root from the declarations (`npm run schema`), or with `--check`
 * exits 1 when the committed file differs from what would be written.
 */
import { writeOrCheck } from "../generated-files";
import { renderPackageSchema } from "../docs/schema-file";

process.exitCode = writeOrCheck([{ path: "schema.json", text: renderPackageSchema() }], "npm run schema", process.argv.slice(2));
