/**
 * `npm run schema:compare` (scripts/schema-compare.mts): schema.json keeps what the last recorded release's schema
 * promised, or package.json's version says it may break it; each kind of change is found and classed on altered copies
 * of the schema (scripts/schema-compare/compare.mts); the version policy (a new major, or before 1.0 a new minor, may
 * break); and the command's exit codes and output.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { breakingAllowed, compareSchemas, type PackageSchema, type SchemaChange } from "../../scripts/schema-compare/compare.mts";
import { lastRecordedSchema } from "../../scripts/upgrade/corpus.mts";

const ROOT = join(__dirname, "..", "..");
const SCRIPT = join(ROOT, "scripts", "schema-compare.mts");
const PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; scripts: Record<string, string> };
const current = (): PackageSchema => JSON.parse(readFileSync(join(ROOT, "schema.json"), "utf8"));
const released = lastRecordedSchema();

const compare = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: "utf8" });
const work = mkdtempSync(join(tmpdir(), "gms-schema-compare-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the current schema as `alter` leaves it. */
function altered(alter: (schema: any) => void): PackageSchema {
  const schema = current();
  alter(schema);
  return schema;
}

const APP = "gms:index:App";
const line = (change: SchemaChange) => `${change.kind} ${change.subject}: ${change.change}`;

describe("schema.json against the last release's", () => {
  it("is an npm script, and the corpus keeps a released schema to compare with", () => {
    expect(PACKAGE.scripts["schema:compare"]).toBe("node scripts/schema-compare.mts");
    expect(released?.version).toBeDefined();
  });

  it("breaks nothing that package.json's version does not allow (npm run schema:compare exits 0)", () => {
    const run = compare();
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`against release ${released!.version}'s (test/upgrade/${released!.version}/schema.json)`);
  });
});

describe("each kind of change, on altered copies of the schema", () => {
  const base = current();
  /** [what is altered, the alteration, the change expected, whether it breaks]. */
  const cases: [string, (schema: any) => void, RegExp, boolean][] = [
    ["a resource removed", (schema) => delete schema.resources["gms:index:Skill"], /^resources gms:index:Skill: removed/, true],
    [
      "a resource renamed, its old token an alias",
      (schema) => {
        schema.resources["gms:index:SkillV2"] = { ...schema.resources["gms:index:Skill"], aliases: [{ type: "gms:index:Skill" }] };
        delete schema.resources["gms:index:Skill"];
      },
      /^resources gms:index:Skill: renamed to gms:index:SkillV2: its alias keeps the stacks' objects/,
      true,
    ],
    [
      "a resource added",
      (schema) => (schema.resources["gms:index:Widget"] = { inputProperties: {}, properties: {} }),
      /^resources gms:index:Widget: added$/,
      false,
    ],
    ["a function removed", (schema) => delete schema.functions["gms:index:getAction"], /^functions gms:index:getAction: removed/, true],
    [
      "a function added",
      (schema) => (schema.functions["gms:index:getWidget"] = { inputs: { properties: {} } }),
      /^functions gms:index:getWidget: added/,
      false,
    ],
    ["an object type removed", (schema) => delete schema.types["gms:index:UsageInfo"], /^types gms:index:UsageInfo: removed/, true],
    [
      "an input removed",
      (schema) => {
        delete schema.resources[APP].inputProperties.description;
        delete schema.resources[APP].properties.description;
      },
      /^properties gms:index:App input description: removed$/,
      true,
    ],
    [
      "an output removed",
      (schema) => delete schema.resources[APP].properties.slug,
      /^properties gms:index:App output slug: removed$/,
      true,
    ],
    [
      "an input's type changed",
      (schema) => (schema.resources[APP].inputProperties.name.type = "integer"),
      /^properties gms:index:App input name: type string changed to integer$/,
      true,
    ],
    [
      "a function argument's type changed",
      (schema) => (schema.functions["gms:index:getAction"].inputs.properties.app.type = "number"),
      /^properties gms:index:getAction argument app: type string changed to number$/,
      true,
    ],
    [
      "an object type's property removed",
      (schema) => delete schema.types["gms:index:Connection"].properties.baseUrl,
      /^properties gms:index:Connection property baseUrl: removed$/,
      true,
    ],
    [
      "an optional input added",
      (schema) => (schema.resources[APP].inputProperties.color = { type: "string" }),
      /^properties gms:index:App input color: added \(string\)$/,
      false,
    ],
    [
      "an input made required",
      (schema) => schema.resources[APP].requiredInputs.push("description"),
      /^required gms:index:App input description: now required$/,
      true,
    ],
    [
      "an input made optional",
      (schema) => (schema.resources[APP].requiredInputs = []),
      /^required gms:index:App input name: no longer required$/,
      false,
    ],
    [
      "an output no longer always set",
      (schema) => (schema.resources[APP].required = schema.resources[APP].required.filter((name: string) => name !== "slug")),
      /^required gms:index:App output slug: no longer always set$/,
      true,
    ],
    [
      "a secret input no longer secret",
      (schema) => delete schema.resources["gms:index:ProviderConnection"].inputProperties.key.secret,
      /^secret gms:index:ProviderConnection input key: no longer secret/,
      true,
    ],
    [
      "a config variable no longer secret",
      (schema) => delete schema.config.variables.apiKey.secret,
      /^secret config variable apiKey: no longer secret/,
      true,
    ],
    [
      "an output made secret",
      (schema) => (schema.resources[APP].properties.slug.secret = true),
      /^secret gms:index:App output slug: now secret$/,
      false,
    ],
    [
      "an input that now replaces",
      (schema) => (schema.resources[APP].inputProperties.name.replaceOnChanges = true),
      /^replaceOnChanges gms:index:App input name: a change now replaces the object/,
      true,
    ],
    [
      "an input that now updates in place",
      (schema) => delete schema.resources["gms:index:Eval"].inputProperties.name.replaceOnChanges,
      /^replaceOnChanges gms:index:Eval input name: a change now updates in place$/,
      false,
    ],
    [
      "a default changed",
      (schema) => (schema.resources["gms:index:ProviderConnection"].inputProperties.default.default = true),
      /^defaults gms:index:ProviderConnection input default: default false changed to true$/,
      true,
    ],
    [
      "a default added",
      (schema) => (schema.resources[APP].inputProperties.name.default = "Support"),
      /^defaults gms:index:App input name: default added "Support"$/,
      true,
    ],
    [
      "a field deprecated",
      (schema) => (schema.resources[APP].inputProperties.description.deprecationMessage = "Use summary instead."),
      /^deprecations gms:index:App input description: deprecated: Use summary instead\.$/,
      false,
    ],
    [
      "a resource deprecated",
      (schema) => (schema.resources[APP].deprecationMessage = "Use gms:index:Project instead."),
      /^deprecations gms:index:App: deprecated: Use gms:index:Project instead\.$/,
      false,
    ],
  ];

  it("finds no change between a schema and itself", () => {
    expect(compareSchemas(base, current())).toEqual([]);
  });

  it.each(cases)("%s", (_what, alter, expected, breaking) => {
    const changes = compareSchemas(base, altered(alter));
    const found = changes.filter((change) => expected.test(line(change)));
    expect(found, changes.map(line).join("\n")).toHaveLength(1);
    expect(found[0]!.breaking).toBe(breaking);
    // A change that breaks nothing comes with no breaking one.
    if (!breaking) expect(changes.filter((change) => change.breaking).map(line)).toEqual([]);
  });

  it("covers every kind of change it lists", () => {
    const kinds = new Set(cases.flatMap(([, alter]) => compareSchemas(base, altered(alter)).map((change) => change.kind)));
    expect([...kinds].sort()).toEqual(
      ["resources", "functions", "types", "properties", "required", "secret", "replaceOnChanges", "defaults", "deprecations"].sort(),
    );
  });
});

describe("which version may break what the last release promised", () => {
  it.each([
    ["0.2.0", "0.2.1", false],
    ["0.2.0", "0.2.0", false],
    ["0.2.0", "0.3.0", true],
    ["0.2.0", "1.0.0", true],
    ["0.2.0", "0.3.0-rc.1", true],
    ["1.2.3", "1.3.0", false],
    ["1.2.3", "1.2.4", false],
    ["1.2.3", "2.0.0", true],
  ] as const)("%s to %s: %s", (from, to, allowed) => {
    const verdict = breakingAllowed(from, to);
    expect(verdict.allowed).toBe(allowed);
    if (!allowed) expect(verdict.reason).toMatch(/needs (0\.\d+\.0|\d+\.0\.0) \(`npm version /);
  });
});

describe("the command", () => {
  /** The current schema with a resource it no longer has, as a release of `version` would have had it. */
  const releasedWithMore = (version: string) => {
    const file = join(work, `released-${version}.json`);
    const schema: any = current();
    schema.version = version;
    schema.resources["gms:index:Gone"] = { inputProperties: {}, properties: {} };
    writeFileSync(file, JSON.stringify(schema));
    return file;
  };

  it("fails a breaking change that package.json's version does not allow, naming the change and the version it needs", () => {
    const run = compare("--against", releasedWithMore(PACKAGE.version));
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^resources \(1\):\n {2}BREAKING gms:index:Gone: removed/m);
    expect(run.stderr).toContain(`1 change, 1 breaking, which ${PACKAGE.version} may not make`);
    expect(run.stderr).toMatch(/needs \d+\.\d+\.0 \(`npm version /);
  });

  it("passes it when package.json's version is a new major (before 1.0, a new minor) after the release's", () => {
    const run = compare("--against", releasedWithMore("0.0.1"), "--json");
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as {
      released: string;
      version: string;
      breaking: number;
      allowed: boolean;
      changes: SchemaChange[];
    };
    expect(result).toMatchObject({ released: "0.0.1", version: PACKAGE.version, breaking: 1, allowed: true });
    expect(result.changes.map(line)).toEqual([expect.stringMatching(/^resources gms:index:Gone: removed/)]);
  });

  it("is a usage error with an unknown flag, and fails on a file it cannot read", () => {
    const usage = compare("--nope");
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("usage: npm run schema:compare");
    const missing = compare("--against", join(work, "missing.json"));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("cannot read");
  });
});
