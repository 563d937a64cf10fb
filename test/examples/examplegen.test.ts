/**
 * The example converter: the unit tests of our Go program scripts/examplegen (a YAML program into TypeScript,
 * Python and Go, the import of the native namespace, byte-identical runs), and `npm run examples -- --check`, which
 * fails when a generated file under examples/programs/ is not what the generator makes now. Needs Go (required
 * under CI=true); each run may compile pkg/v3 first, minutes on 2 cores, which later runs take from Go's build cache.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { goPresent } from "../go-present";
import { runToEnd } from "../run-to-end";

const FILE = "examples/examplegen.test.ts";
const ROOT = join(__dirname, "..", "..");
const TIMEOUT = 300_000;

describe.skipIf(!goPresent(FILE, "the example converter (a Go program)"))("the example converter", () => {
  it(
    "passes its Go unit tests",
    async () => {
      const { code, output } = await runToEnd("go", ["test", "./..."], join(ROOT, "scripts", "examplegen"));
      expect(code, output).toBe(0);
    },
    TIMEOUT,
  );

  it(
    "finds the committed examples as the generator makes them (npm run examples -- --check)",
    async () => {
      const { code, output } = await runToEnd(process.execPath, [join(ROOT, "scripts", "examples.mts"), "--check"], ROOT);
      expect(code, output).toBe(0);
    },
    TIMEOUT,
  );
});
