/**
 * Writes the generated reference pages under docs/ from the declarations (`npm run docs`), or with `--check`
 * exits 1 when a committed page differs from what would be written. Loading the module does nothing: the
 * work runs only when it is the program (`node dist/docs/cli.js`).
 */
import { writeOrCheck } from "../generated-files";
import { DOCS_COMMAND } from "./markdown";
import { generatedDocs } from "./render";

if (require.main === module) process.exitCode = writeOrCheck(generatedDocs(), DOCS_COMMAND, process.argv.slice(2));
