/**
 * Adding a plain field to App is its declaration plus the emulator's column: a copy of the package gets a field
 * `color` in exactly three places, and nothing else, then is compiled and shown to carry it everywhere:
 * - src/api/apps.ts: the wire field in the App, its create body and its update body (the endpoint entries);
 * - src/resources/app.ts: the input's declaration (updatable, default null);
 * - src/emulator/store: the column in the `apps` description and the migration that adds it.
 * The compiled copy then proves the field flows to schema.json (as generated), the native provider's schema and
 * its router, the YAML workspace schema, the generated docs, the client, the emulator (created, read back,
 * updated in place, no diff after) and the dynamic provider's create, read and update.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");
const TIMEOUT = 240_000;

/** Replaces `before` by `after` in `file` of the copy, failing the test if `before` is not there exactly once. */
function patch(copy: string, file: string, before: string, after: string): void {
  const path = join(copy, file);
  const text = readFileSync(path, "utf8");
  expect(text.split(before).length - 1, `${file}: ${before}`).toBe(1);
  writeFileSync(path, text.replace(before, after));
}

/** What the child process prints as JSON: the field as each part of the compiled copy sees it. */
const PROBE = `
const { startEmulator } = require("./dist/emulator");
const { generatePackageSchema } = require("./dist/schema/package-schema");
const { workspaceJsonSchema } = require("./dist/workspace/schema-json");
const { generatedPages } = require("./dist/docs/render");
const { resourceProvider } = require("./dist/provider/provider");
const { appKind } = require("./dist/resources/app");
const { KindRouter } = require("./dist/plugin/router");
const { Session } = require("./dist/provider/session");
const { appsApi } = require("./dist/api/apps");
const { GmsClient } = require("./dist/client");
(async () => {
  const emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "Color", apiKey: "gms_color_key_1234" }] });
  const connection = { baseUrl: emulator.url, apiKey: "gms_color_key_1234" };
  const client = new GmsClient(connection);
  const schema = generatePackageSchema();
  const app = schema.resources["gms:index:App"];
  const workspace = JSON.stringify(workspaceJsonSchema());
  const reference = generatedPages().find((page) => page.path.endsWith("kinds/app.md")).text;
  const provider = resourceProvider(appKind, new Session());
  const checked = await provider.check({}, { name: "Painted", color: "teal", connection });
  const created = await provider.create(checked.inputs);
  const read = await appsApi.get(client, created.id);
  const changed = await provider.check(checked.inputs, { ...checked.inputs, color: "navy" });
  const diff = await provider.diff(created.id, created.outs, changed.inputs);
  const updated = await provider.update(created.id, created.outs, changed.inputs);
  const after = await provider.diff(created.id, updated.outs, changed.inputs);
  const session = new Session();
  session.configure({ baseUrl: emulator.url, apiKey: "gms_color_key_1234" });
  const route = new KindRouter(session).route("gms:index:App");
  const native = await route.create((await route.check({}, { name: "Native", color: "amber" })).inputs, false);
  process.stdout.write(JSON.stringify({
    schemaInput: app.inputProperties.color, schemaOutput: app.properties.color,
    yaml: /"color"/.test(workspace), docs: reference.split("\\n").some((line) => line.startsWith("| \`color\`")),
    created: created.outs.color, read: read.color, diff, updated: updated.outs.color, after,
    readAfter: (await appsApi.get(client, created.id)).color, native: native.properties.color,
  }));
  await emulator.close();
})().catch((error) => { console.error(error); process.exit(1); });
`;

describe("a plain field added to App", () => {
  let copy: string;
  let probe: Record<string, any>;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "gms-add-field-"));
    for (const entry of ["src", "package.json", "tsconfig.json"]) cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");
    // 1. The wire: the field in the App, in its create body and in its update body.
    patch(copy, "src/api/apps.ts", "    slug: z.string(),\n", "    slug: z.string(),\n    color: z.string().nullable(),\n");
    patch(
      copy,
      "src/api/apps.ts",
      "    description: z.string().nullable().optional(),\n  }),\n",
      "    description: z.string().nullable().optional(),\n    color: z.string().nullable().optional(),\n  }),\n",
    );
    patch(
      copy,
      "src/api/apps.ts",
      "      description: z.string().nullable().optional(),\n    })\n",
      "      description: z.string().nullable().optional(),\n      color: z.string().nullable().optional(),\n    })\n",
    );
    // 2. The resource's input.
    patch(
      copy,
      "src/resources/app.ts",
      '      description: updatable(z.string().nullable(), "What the App is for.", { default: null }),\n',
      '      description: updatable(z.string().nullable(), "What the App is for.", { default: null }),\n' +
        '      color: updatable(z.string().nullable(), "The App\'s colour in the console.", { default: null }),\n',
    );
    // 3. The emulator's column, and the migration that adds it.
    patch(copy, "src/emulator/store/apps.ts", "  slug: text,\n", "  slug: text,\n  color: nullable(text),\n");
    const migrations = join(copy, "src/emulator/store/migrations.ts");
    const text = readFileSync(migrations, "utf8");
    const end = text.indexOf("\n];", text.indexOf("export const MIGRATIONS"));
    writeFileSync(
      migrations,
      `${text.slice(0, end)}\n  { name: "apps.color", sql: "ALTER TABLE apps ADD COLUMN color TEXT" },${text.slice(end)}`,
    );

    const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "src"], {
      cwd: copy,
      encoding: "utf8",
    });
    expect(tsc.status, `${tsc.stdout}${tsc.stderr}`).toBe(0);
    const run = spawnSync(process.execPath, ["-e", PROBE], { cwd: copy, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    probe = JSON.parse(run.stdout);
  }, TIMEOUT);
  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it("is in schema.json's App (input and output), the native provider's router, the YAML schema and the docs", () => {
    expect(probe.schemaInput).toMatchObject({ type: "string" });
    expect(probe.schemaOutput).toMatchObject({ type: "string" });
    expect(probe.native).toBe("amber");
    expect(probe.yaml).toBe(true);
    expect(probe.docs).toBe(true);
  });

  it("reaches the emulator and the client, and updates in place with no diff after", () => {
    expect(probe.created).toBe("teal");
    expect(probe.read).toBe("teal");
    expect(probe.diff).toMatchObject({ changes: true, replaces: [] });
    expect(probe.updated).toBe("navy");
    expect(probe.readAfter).toBe("navy");
    expect(probe.after).toMatchObject({ changes: false });
  });
});
