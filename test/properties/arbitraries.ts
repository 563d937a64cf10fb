/**
 * What the property suites generate, and how they run: values of every shape an engine or a program can hand a
 * provider (wrong types, empty and huge strings, unicode, nulls, unknowns, secrets nested in lists and objects,
 * extra keys), inputs of each kind made from a valid example with fields replaced by such values, and `property`,
 * which runs fast-check with a seed it prints (FC_SEED replays one, FC_RUNS sets the number of cases) and, on a
 * failure, the shrunk case to keep as a regression test. Under CI=true the seed is the commit's: each commit tries
 * other cases, and CI of one commit tries the same ones, so a clean clone's run says what the landing's will.
 */
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { KIND_NAMES, type KindName } from "../../src/resources";
import { makeSecret, UNKNOWN } from "../../src/provider/values";
import { kinds } from "../../src/resources";

/** A secret's value the suites look for in every failure: it must never appear there. */
export const MARKER = "sk-property-marker-5f0e1d";

const GUID = "7d8a4f2e-3b1c-4d5e-8f90-a1b2c3d4e5f6";
const OTHER_GUID = "0c9b8a7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d";

/** A valid example of each kind's inputs, as a program declares them. */
export const VALID: Record<KindName, Record<string, unknown>> = {
  App: { name: "Support", description: "Answers tickets" },
  ProviderConnection: { provider: "openai", key: MARKER, url: null, name: null, nickname: "Main", default: false },
  Model: { llm: "gpt-4o-mini", provider: "openai", key: MARKER, url: null, default: false },
  Workflow: { name: "Triage", app: GUID },
  Dataset: { name: "Golden", description: null, app: GUID, data: [OTHER_GUID] },
  Eval: {
    name: "Quality",
    action: GUID,
    evalTypes: [{ guid: OTHER_GUID }],
    dataset: null,
    version: null,
    samplingRate: 0.5,
    alertOnFail: false,
  },
  Experiment: { name: "Concise", app: GUID, primaryAction: GUID, secondaryAction: OTHER_GUID },
  Skill: { name: "web-search", type: "web" },
  ContextSource: { context: GUID, url: "https://docs.example.com/handbook.md", splitterConfig: { chunkSize: 400, chunkOverlap: 40 } },
  FineTune: {
    name: "Tuned",
    app: GUID,
    dataset: OTHER_GUID,
    dataIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    baseModel: "gpt-4o-mini",
    providerConnection: 7,
  },
};
if (Object.keys(VALID).length !== KIND_NAMES.length) throw new Error("test/properties: a kind has no valid example");

/** Strings of every sort: empty, blank, unicode (graphemes, lone surrogates), huge, GUID-like, URL-like, the unknown. */
const strings = fc.oneof(
  fc.constantFrom("", " ", "\n", "null", "0", "-1", "1e309", "http://", "not a url", "https://x/v1", GUID, UNKNOWN, "\u0000", "\ud800"),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ minLength: 10_000, maxLength: 70_000 }).map((text) => text.padEnd(10_000, "x")),
);

const scalars = fc.oneof(
  strings,
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -0, 1.5, Number.MAX_SAFE_INTEGER, 2 ** 64),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);

/** Any value: scalars, lists and objects of them (extra keys included), secrets around any of them, the marker in a secret. */
export const anyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalars,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie("value"), { maxKeys: 4 }),
    tie("value").map((inner) => makeSecret(inner)),
    fc.constant(makeSecret(MARKER)),
    fc.constant([makeSecret(MARKER)]),
    fc.constant({ nested: makeSecret({ deeper: MARKER }) }),
  ),
})).value;

/**
 * Inputs of `kind`: its valid example with some fields replaced by any value or left out, some keys added, and,
 * now and then, a secret marker where the program made a declared field secret; or, a quarter of the time, the
 * valid example as a preview has it (fields unknown, made secret, optional ones left out).
 */
export const inputsOf = (kind: KindName): fc.Arbitrary<Record<string, unknown>> => {
  const valid = VALID[kind];
  const names = Object.keys(valid);
  const optional = names.filter((name) => !(kinds[kind].inputs as Record<string, { required?: boolean }>)[name]?.required);
  // Valid inputs as a preview or a program has them: fields unknown, made secret, optional ones left out.
  const previewed = fc
    .record({
      unknown: fc.subarray(names, { maxLength: 2 }),
      secret: fc.subarray(names, { maxLength: 2 }),
      dropped: fc.subarray(optional, { maxLength: Math.min(2, optional.length) }),
    })
    .map(({ unknown, secret, dropped }) => {
      const inputs: Record<string, unknown> = { ...valid };
      for (const name of unknown) inputs[name] = UNKNOWN;
      for (const name of secret) inputs[name] = makeSecret(inputs[name]);
      for (const name of dropped) delete inputs[name];
      return inputs;
    });
  const mutated = fc
    .record({
      replaced: fc.dictionary(fc.constantFrom(...names, "connection"), anyValue, { maxKeys: 3 }),
      dropped: fc.subarray(names, { maxLength: 2 }),
      extra: fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !(key in valid) && key !== "connection" && !key.startsWith("__")),
        anyValue,
        { maxKeys: 2 },
      ),
      secretField: fc.option(fc.constantFrom(...names), { nil: undefined }),
    })
    .map(({ replaced, dropped, extra, secretField }) => {
      const inputs: Record<string, unknown> = { ...valid, ...replaced, ...extra };
      for (const name of dropped) delete inputs[name];
      if (secretField !== undefined && inputs[secretField] !== undefined) inputs[secretField] = makeSecret(inputs[secretField]);
      return inputs;
    });
  return fc.oneof({ arbitrary: mutated, weight: 3 }, { arbitrary: previewed, weight: 1 });
};

/** FC_SEED; else, under CI=true, one made from the commit (its first 32 bits); else a fresh one. */
function seedOf(): number {
  if (process.env.FC_SEED !== undefined) return Number(process.env.FC_SEED);
  if (process.env.CI === "true") {
    const head = spawnSync("git", ["rev-parse", "HEAD"], { cwd: __dirname, encoding: "utf8" }).stdout?.trim() ?? "";
    if (/^[0-9a-f]{8}/.test(head)) return Number.parseInt(head.slice(0, 8), 16) | 0;
  }
  return Date.now() ^ (Math.random() * 2 ** 31);
}

/**
 * Runs `predicate` over `arbitrary` with a printed seed and case count, and how many cases ended each way (the label
 * `predicate` answers: "accepted", "refused", ...); throws with the shrunk case when it fails.
 */
export async function property<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<string | undefined> | string | undefined,
): Promise<void> {
  const seed = seedOf();
  const numRuns = process.env.FC_RUNS === undefined ? 150 : Number(process.env.FC_RUNS);
  const labels = new Map<string, number>();
  const details = await fc.check(
    fc.asyncProperty(arbitrary, async (value) => {
      const label = (await predicate(value)) ?? "passed";
      labels.set(label, (labels.get(label) ?? 0) + 1);
    }),
    { seed, numRuns },
  );
  const tally = [...labels].map(([label, count]) => `${count} ${label}`).join(", ");
  process.stdout.write(`property ${name}: seed ${seed}, ${details.numRuns} cases (${tally})${details.failed ? ", FAILED" : ""}\n`);
  if (details.failed) {
    const shrunk = fc.stringify(details.counterexample?.[0]);
    throw new Error(
      `property ${name} failed (replay with FC_SEED=${seed}) on, shrunk:\n${shrunk}\n` +
        `${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n` +
        'Once fixed, keep the case as a plain test in the suite\'s "cases the properties found".',
    );
  }
}
