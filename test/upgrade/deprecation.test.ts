/**
 * Deprecation before removal (src/provider/deprecation.ts), on test copies of a kind (test/fixtures/deprecated-kinds.mts:
 * `Widget` before its rename; `Gadget`, renamed from it, its `description` deprecated; `Gizmo`, deprecated), since no
 * real kind or field is deprecated:
 * - schema.json carries `deprecationMessage` and the former token as an alias; `npm run schema:compare` lists both;
 * - the reference pages say what replaces each;
 * - the plugin's check warns a program that uses them, and serves the former token; the dynamic resources' class warns;
 * - the SDKs generated from the schema warn (Python, at run time) or mark it (Go's `Deprecated:`), and pass the alias
 *   (with Go, required under CI=true);
 * - on the real CLI with the YAML host (required under CI=true): the warning reaches the user under its resource, in
 *   preview and up; a stack made while the kind had its old name previews with no change after the rename, and keeps
 *   its object.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { compareSchemas, type PackageSchema } from "../../scripts/schema-compare/compare.mts";
import { renderKindPage } from "../../src/docs/kind-pages";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { KindRouter } from "../../src/plugin/router";
import { Session } from "../../src/provider/session";
import { makeSecret } from "../../src/provider/values";
import { deprecationWarnings } from "../../src/provider/deprecation";
import type { Kind } from "../../src/provider/kind";
import { GmsResource, withFormerTypes } from "../../src/provider/resource";
import { shim } from "../../src/provider/shim";
import { appKind } from "../../src/resources/app";
import { generatePackageSchema } from "../../src/schema/package-schema";
import { callOverHttp } from "../emulator/harness";
import { DESCRIPTION_DEPRECATED, KIND_DEPRECATED, deprecatedKinds } from "../fixtures/deprecated-kinds.mts";
import { goPresent } from "../go-present";
import { type CliProject, startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";

const ROOT = join(__dirname, "..", "..");
const { widget, gadget, gizmo } = deprecatedKinds(appKind);
const BEFORE = { Widget: widget };
const AFTER = { Gadget: gadget, Gizmo: gizmo };
type Resources = Record<string, { aliases?: { type: string }[]; deprecationMessage?: string; inputProperties: any; properties: any }>;
const resourcesOf = (registry: Record<string, Kind>) => generatePackageSchema({ registry }).resources as Resources;

describe("what a kind declares deprecated or renamed, in schema.json and the reference pages", () => {
  const resources = resourcesOf(AFTER);

  it("carries a deprecated input's message in the resource's inputs and outputs, and a deprecated kind's on the resource", () => {
    expect(resources["gms:index:Gadget"]!.inputProperties.description.deprecationMessage).toBe(DESCRIPTION_DEPRECATED);
    expect(resources["gms:index:Gadget"]!.properties.description.deprecationMessage).toBe(DESCRIPTION_DEPRECATED);
    expect(resources["gms:index:Gadget"]!.inputProperties.name.deprecationMessage).toBeUndefined();
    expect(resources["gms:index:Gadget"]!.deprecationMessage).toBeUndefined();
    expect(resources["gms:index:Gizmo"]!.deprecationMessage).toBe(KIND_DEPRECATED);
    expect(resourcesOf(BEFORE)["gms:index:Widget"]).not.toHaveProperty("deprecationMessage");
  });

  it("keeps a renamed kind's former token as an alias", () => {
    expect(resources["gms:index:Gadget"]!.aliases).toEqual([{ type: "gms:index:Widget" }]);
    expect(resources["gms:index:Gizmo"]).not.toHaveProperty("aliases");
  });

  it("is listed by the schema comparison: the rename (breaking: programs name the old type), each deprecation (not)", () => {
    const changes = compareSchemas(
      generatePackageSchema({ registry: BEFORE }) as PackageSchema,
      generatePackageSchema({ registry: AFTER }) as PackageSchema,
    );
    const lines = changes.map((change) => `${change.breaking ? "BREAKING " : ""}${change.kind} ${change.subject}: ${change.change}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^BREAKING resources gms:index:Widget: renamed to gms:index:Gadget: its alias keeps the stacks' objects/),
        "resources gms:index:Gadget: added, with the alias gms:index:Widget",
        `deprecations gms:index:Gizmo: deprecated: ${KIND_DEPRECATED}`,
      ]),
    );
  });

  it("says on the reference page what replaces a deprecated input or kind, and the type a renamed kind had", () => {
    const schema = generatePackageSchema({ registry: AFTER });
    const page = renderKindPage(gadget, { schema, programs: [] });
    expect(page).toContain(`| \`description\` |`);
    expect(page).toContain(`**Deprecated:** ${DESCRIPTION_DEPRECATED} What the App is for.`);
    expect(page).toMatch(
      /^Formerly `gms:index:Widget` \(the dynamic resources' `pulumi-nodejs:dynamic\/gms:Widget`\): a stack that holds/m,
    );
    expect(renderKindPage(gizmo, { schema, programs: [] })).toContain(
      `\`gms:index:Gizmo\`: **Deprecated:** ${KIND_DEPRECATED} A test copy`,
    );
  });
});

describe("a program that uses what is deprecated is warned", () => {
  const { GMS_BASE_URL, GMS_API_KEY } = process.env;
  beforeAll(() => {
    // Check sends nothing; it only needs a service and a key to be named.
    process.env.GMS_BASE_URL = "http://127.0.0.1:9/v1";
    process.env.GMS_API_KEY = "gms_deprecation_key";
  });
  afterAll(() => {
    process.env.GMS_BASE_URL = GMS_BASE_URL;
    process.env.GMS_API_KEY = GMS_API_KEY;
  });

  it("names each deprecated input given (not one left out or null), and a deprecated kind", () => {
    expect(deprecationWarnings(gadget, { name: "A", description: "set" })).toEqual([
      `Gadget's input description is deprecated: ${DESCRIPTION_DEPRECATED}`,
    ]);
    expect(deprecationWarnings(gadget, { name: "A", description: null })).toEqual([]);
    expect(deprecationWarnings(gadget, { name: "A" })).toEqual([]);
    expect(deprecationWarnings(gizmo, { name: "A" })).toEqual([`Gizmo is deprecated: ${KIND_DEPRECATED}`]);
    expect(deprecationWarnings(appKind, { name: "A", description: "set" })).toEqual([]);
  });

  it("by the plugin's check, which serves the former token too, and still checks", async () => {
    const router = new KindRouter(new Session(), AFTER);
    const old = router.route("gms:index:Widget");
    expect(old).toBe(router.route("gms:index:Gadget"));
    const checked = await old.check({}, { name: "Legacy", description: makeSecret("set as a secret") });
    expect(checked.failures).toEqual([]);
    expect(checked.warnings).toEqual([`Gadget's input description is deprecated: ${DESCRIPTION_DEPRECATED}`]);
    expect((await old.check({}, { name: "Legacy" })).warnings).toEqual([]);
    expect((await router.route("gms:index:Gizmo").check({}, { name: "Old" })).warnings).toEqual([
      `Gizmo is deprecated: ${KIND_DEPRECATED}`,
    ]);
    expect(() => router.route("gms:index:App")).toThrow(
      /has no resource type gms:index:App; it serves gms:index:Gadget, gms:index:Widget, gms:index:Gizmo/,
    );
    // This package's own kinds deprecate nothing: their check warns of nothing.
    expect((await new KindRouter(new Session()).route("gms:index:App").check({}, { name: "A", description: "B" })).warnings).toEqual([]);
  });

  it("by the dynamic resources' class, as the program declares it, under its resource", async () => {
    await pulumi.runtime.setMocks(
      { newResource: async (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: async () => ({}) },
      "gms-deprecation-test",
      "dev",
      false,
    );
    class Gadget extends GmsResource {
      constructor(name: string, args: Record<string, unknown>) {
        super(gadget, shim("App"), name, args);
      }
    }
    const warned = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      new Gadget("with-description", { name: "With", description: "set" });
      new Gadget("without", { name: "Without" });
      // With no engine (mocks), the SDK's log writes to the console (the package's other warnings too).
      expect(warned.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("deprecated"))).toEqual([
        `warning: [runtime] Gadget's input description is deprecated: ${DESCRIPTION_DEPRECATED}`,
      ]);
    } finally {
      warned.mockRestore();
    }
  });

  it("passes a renamed kind's former types as aliases, beside the program's own", () => {
    const own = { type: "my:module:Earlier" };
    expect(withFormerTypes(gadget, "native", { aliases: [own] }).aliases).toEqual([own, { type: "gms:index:Widget" }]);
    expect(withFormerTypes(gadget, "dynamic", {}).aliases).toEqual([{ type: "pulumi-nodejs:dynamic/gms:Widget" }]);
    const opts = { protect: true };
    expect(withFormerTypes(gizmo, "native", opts)).toBe(opts);
  });
});

const go = goPresent("upgrade/deprecation.test.ts", "the SDKs generated from a schema with deprecations");

describe.skipIf(!go)("the SDKs generated from the schema (scripts/pulumi-cli/sdkgen)", () => {
  let out: string;
  const read = (file: string) => readFileSync(join(out, file), "utf8");

  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), "gms-deprecation-sdks-"));
    writeFileSync(join(out, "schema.json"), JSON.stringify(generatePackageSchema({ registry: AFTER })));
    // As scripts/dist/sdks.mts runs the generator, on this schema.
    const run = spawnSync("go", ["run", "-trimpath", "./sdkgen", "-schema", join(out, "schema.json"), "-out", out], {
      cwd: join(ROOT, "scripts", "pulumi-cli"),
      encoding: "utf8",
      timeout: 590_000,
    });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  }, 600_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("Python warns when a program passes a deprecated input or declares a deprecated kind, and passes the alias", () => {
    const gadgetPy = read("python/pulumi_gms/gadget.py");
    expect(gadgetPy).toContain(`warnings.warn("""${DESCRIPTION_DEPRECATED}""", DeprecationWarning)`);
    expect(gadgetPy).toContain(`pulumi.log.warn("""description is deprecated: ${DESCRIPTION_DEPRECATED}""")`);
    expect(gadgetPy).toContain('pulumi.Alias(type_="gms:index:Widget")');
    expect(read("python/pulumi_gms/gizmo.py")).toContain(`pulumi.log.warn("""Gizmo is deprecated: ${KIND_DEPRECATED}""")`);
  });

  it("Go marks them Deprecated (for go vet and editors), and passes the alias", () => {
    const gadgetGo = read("go/gms/gadget.go");
    expect(gadgetGo).toContain(`// Deprecated: ${DESCRIPTION_DEPRECATED}`);
    expect(gadgetGo).toMatch(/pulumi\.Alias\{\s*\{\s*Type: pulumi\.String\("gms:index:Widget"\),\s*\},?\s*\}/);
    expect(read("go/gms/gizmo.go")).toContain(`// Deprecated: ${KIND_DEPRECATED}`);
  });
});

const cli = yamlCliFor("upgrade/deprecation.test.ts");
const TIMEOUT = 600_000;
const API_KEY = "gms_deprecation_cli_key";

/** A Pulumi YAML program of one resource of `type` (with a `description`), and a Gizmo when asked. */
const program = (type: string, gizmoToo = false) => `name: gms-deprecation
runtime: yaml
resources:
  legacy:
    type: ${type}
    properties:
      name: Legacy
      description: Made before the rename
${gizmoToo ? "  old:\n    type: gms:index:Gizmo\n    properties:\n      name: Old tool\n" : ""}outputs:
  guid: \${legacy.guid}
`;

describe.skipIf(!cli)(`deprecation and a renamed type on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let project: CliProject;
  /** Puts the fixture plugin serving the kinds of `release` where the engine finds `pulumi-resource-gms`. */
  const servePlugin = (release: "before" | "after") => {
    const plugin = join(project.root, "bin", "pulumi-resource-gms");
    rmSync(plugin, { force: true });
    const entry = join(ROOT, "test", "fixtures", "deprecated-kinds-plugin.mts");
    writeFileSync(plugin, `#!/bin/sh\nexec '${process.execPath}' '${entry}' ${release} "$@"\n`);
    chmodSync(plugin, 0o755);
  };
  const guidOf = async () => (JSON.parse(await project.pulumi("stack", "output", "--json")) as { guid: string }).guid;
  /** The lines the CLI printed under the heading of `resource`'s diagnostics. */
  const diagnosticsOf = (printed: string, resource: string) => {
    const section = printed.split("\nDiagnostics:\n")[1] ?? "";
    const start = section.indexOf(`  ${resource}:\n`);
    return start < 0 ? "" : section.slice(start).split("\n\n")[0]!;
  };

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", apiKey: API_KEY });
    project = startCliProject(cli!, "gms-deprecation", program("gms:index:Widget"));
    await project.initStack("dev", { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: API_KEY } });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    project?.close();
  });

  it(
    "warns of a deprecated input under its resource; the stack of the old type previews with no change and keeps its object",
    async () => {
      servePlugin("before");
      const before = await project.pulumi("up", "--yes", "--skip-preview");
      expect(before).not.toContain("deprecated");
      const guid = await guidOf();

      // The release that renamed Widget to Gadget and deprecated description: the program names the new type.
      servePlugin("after");
      project.write(program("gms:index:Gadget"));
      const preview = await project.pulumi("preview", "--expect-no-changes");
      expect(diagnosticsOf(preview, "gms:index:Gadget (legacy)")).toContain(
        `warning: Gadget's input description is deprecated: ${DESCRIPTION_DEPRECATED}`,
      );
      const up = await project.pulumi("up", "--yes");
      expect(diagnosticsOf(up, "gms:index:Gadget (legacy)")).toContain(`warning: Gadget's input description is deprecated`);
      expect(up).toMatch(/Resources:\n\s+2 unchanged/);
      expect(await guidOf()).toBe(guid);
      const state = JSON.parse(await project.pulumi("stack", "export")) as { deployment: { resources: { type: string; id?: string }[] } };
      expect(state.deployment.resources.filter((resource) => resource.id === guid).map((resource) => resource.type)).toEqual([
        "gms:index:Gadget",
      ]);
      expect((await callOverHttp({ url: emulator.url, apiKey: API_KEY }, "GET", `/apps/${guid}`)).body.name).toBe("Legacy");

      // A deprecated kind, declared anew.
      project.write(program("gms:index:Gadget", true));
      const withGizmo = await project.pulumi("up", "--yes");
      expect(diagnosticsOf(withGizmo, "gms:index:Gizmo (old)")).toContain(`warning: Gizmo is deprecated: ${KIND_DEPRECATED}`);
      await project.pulumi("destroy", "--yes");
      expect((await callOverHttp({ url: emulator.url, apiKey: API_KEY }, "GET", `/apps/${guid}`)).status).toBe(404);
    },
    TIMEOUT,
  );
});
