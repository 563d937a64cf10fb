/**
 * Every kind's Check and Diff, in the plugin (its KindRoute, values in the wire's form: secrets wrapped, unknowns as
 * the engine's sentinel) and in the dynamic provider (`resourceProvider`, plain values with the names of the secret
 * ones beside them), driven by generated inputs (./arbitraries.ts):
 * - Check never throws, and each failure names its field and says what is wrong;
 * - no failure holds a secret's value;
 * - inputs Check accepts are accepted again, unchanged, when checked once more;
 * - Diff of those inputs against themselves is no change (unless an unknown makes the change unknown).
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { reveal } from "../../src/plugin/wire";
import { KIND_NAMES, type KindName } from "../../src/resources";
import { SECRET_INPUTS } from "../../src/provider/secret-inputs";
import { containsUnknown } from "../../src/provider/values";
import { kinds } from "../../src/resources";
import { inputsOf, MARKER, property } from "./arbitraries";

// The built package, as the engines load it: a kind's provider loads the kind's module by its built path.
const built = createRequire(__filename);
const { KindRoute } = built("../../dist/plugin/router.js") as typeof import("../../src/plugin/router");
const { resourceProvider } = built("../../dist/provider/provider.js") as typeof import("../../src/provider/provider");
const { Session } = built("../../dist/provider/session.js") as typeof import("../../src/provider/session");
const builtKinds = (built("../../dist/resources/index.js") as typeof import("../../src/resources")).kinds;

type Props = Record<string, unknown>;
type Failure = { property: string; reason: string };

/** What a failure must be: a field of the kind's (or one the program added), a reason that says what is expected, no secret. */
function expectNamed(kind: KindName, inputs: Props, failures: readonly Failure[]): void {
  const fields = new Set([...Object.keys(kinds[kind].inputs), "connection", ...Object.keys(inputs)]);
  for (const failure of failures) {
    expect(typeof failure.property === "string" && failure.property !== "", JSON.stringify(failure)).toBe(true);
    // A nested field is named by its path from the top-level one: `evalTypes[0].guid`, `splitterConfig.chunkSize`.
    const named = fields.has(failure.property) || fields.has(failure.property.split(/[.[]/)[0]!);
    expect(named, `${failure.property} is no field of ${kind}`).toBe(true);
    expect(failure.reason.trim().length, JSON.stringify(failure)).toBeGreaterThan(5);
  }
  expect(JSON.stringify(failures)).not.toContain(MARKER);
}

// A service no request reaches: Check and Diff send none (an attempt fails the property with a connection error).
process.env.GMS_BASE_URL = "http://127.0.0.1:9/v1";
process.env.GMS_API_KEY = "gms-property-key";

describe.each(KIND_NAMES.map((kind) => [kind]))("%s: Check and Diff on generated inputs", (kind) => {
  it("in the plugin", async () => {
    const route = new KindRoute(builtKinds[kind], new Session());
    await property(`plugin ${kind} check/diff`, inputsOf(kind), async (news) => {
      const checked = await route.check({}, news);
      expectNamed(kind, reveal(news).values, checked.failures);
      if (checked.failures.length > 0) return "refused";
      const again = await route.check({}, checked.inputs);
      expect(again.failures).toEqual([]);
      expect(again.inputs).toEqual(checked.inputs);
      if (containsUnknown(reveal(checked.inputs).values)) return "accepted with an unknown";
      const diff = await route.diff("id", checked.inputs, checked.inputs);
      expect(diff.changes, JSON.stringify(diff.detailedDiff)).toBe(false);
      expect(diff.replaces).toEqual([]);
      return "accepted";
    });
  });

  it("in the dynamic provider", async () => {
    const provider = resourceProvider(builtKinds[kind], new Session());
    await property(`dynamic ${kind} check/diff`, inputsOf(kind), async (news) => {
      // The host hands the provider plain values, with the names of those the program made secret beside them.
      const { values, secretNames } = reveal(news);
      const plain = secretNames.size > 0 ? { ...values, [SECRET_INPUTS]: [...secretNames].sort() } : values;
      const checked = await provider.check({}, plain);
      const failures = (checked.failures ?? []) as Failure[];
      expectNamed(kind, values, failures);
      if (failures.length > 0) return "refused";
      const inputs = checked.inputs as Props;
      const again = await provider.check({}, inputs);
      expect(again.failures ?? []).toEqual([]);
      expect(again.inputs).toEqual(inputs);
      if (containsUnknown(inputs)) return "accepted with an unknown";
      const diff = await provider.diff("id", inputs, inputs);
      expect(diff.changes, JSON.stringify(diff)).toBe(false);
      return "accepted";
    });
  });
});
