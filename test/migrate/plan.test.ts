/**
 * The migration plan on a realistic stack export (the shape `pulumi stack export` of v3.274 writes for this
 * package's dynamic resources: root stack, the pulumi-nodejs default provider, `__provider` in inputs and
 * outputs, secrets as ciphertext, parents and dependencies as URNs), with what an interrupted or failed run
 * leaves (a placeholder, a partially created resource, a replaced object pending deletion, a pending operation)
 * and resources outside the package; then the files and the command itself, and each refusal.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCommand } from "../../src/cli/main";
import { migrateCommand } from "../../src/cli/migrate";
import { MigrationError } from "../../src/migrate/errors";
import { packageNativeSchema } from "../../src/migrate/native-schema";
import { type MigrationPlan, planMigration } from "../../src/migrate/plan";
import { renderDeleteScript, renderImportFile, renderSummary } from "../../src/migrate/render";
import { parseStackExport, type StackExport, type StateResource } from "../../src/migrate/stack-export";
import { SECRET_SIG, SIG_KEY } from "../../src/provider/values";

const cipher = (text: string) => ({ [SIG_KEY]: SECRET_SIG, ciphertext: `v1:abcdEFGH:${text}` });
const PREFIX = "urn:pulumi:dev::helpdesk";
const STACK = `${PREFIX}::pulumi:pulumi:Stack::helpdesk-dev`;
const NODEJS = `${PREFIX}::pulumi:providers:pulumi-nodejs::default`;
const dyn = (kind: string) => `pulumi-nodejs:dynamic/gms:${kind}`;
const urn = (kind: string, name: string, parentType?: string) => `${PREFIX}::${parentType ? `${parentType}$` : ""}${dyn(kind)}::${name}`;
const guid = (n: number) => `5b0a3c4e-1f2d-4e6f-8a9b-${n.toString(16).padStart(12, "0")}`;
const PROVIDER_TEXT = 'exports.handler = __f0;\nconst provider = require("pulumi-gms/dist/shims/app.js");\n';

/** A dynamic gms resource as state records it: `__provider` in inputs and outputs, the GUID as id and output. */
function gms(
  kind: string,
  name: string,
  id: string,
  inputs: Record<string, unknown>,
  extra: Partial<StateResource> = {},
  parentType?: string,
) {
  return {
    urn: urn(kind, name, parentType),
    custom: true,
    id,
    type: dyn(kind),
    inputs: { __provider: PROVIDER_TEXT, ...inputs },
    outputs: { __provider: PROVIDER_TEXT, ...inputs, guid: id, createdAt: "2026-11-25T13:19:19.708Z" },
    parent: STACK,
    provider: `${NODEJS}::2098bad0-7b9c-477d-8711-632fcfbadd4b`,
    propertyDependencies: Object.fromEntries(Object.keys(inputs).map((key) => [key, []])),
    ...extra,
  } as StateResource;
}

const TEAM = `${PREFIX}::acme:index:Team::team`;
const APP = urn("App", "support");
const GOLDEN = urn("Dataset", "golden");
const TUNE_SET = urn("Dataset", "tune-set");
const OPENAI = urn("ProviderConnection", "openai");
const DOWNSTREAM = urn("App", "downstream");

function realisticExport(): StackExport {
  const resources: StateResource[] = [
    { urn: STACK, custom: false, type: "pulumi:pulumi:Stack" },
    {
      urn: NODEJS,
      custom: true,
      id: "2098bad0-7b9c-477d-8711-632fcfbadd4b",
      type: "pulumi:providers:pulumi-nodejs",
      inputs: { "gms:apiKey": cipher("stackkey") },
    },
    gms("App", "support", guid(1), { name: "Support", description: null }, { protect: true }),
    gms("ProviderConnection", "openai", guid(2), { provider: "openai", key: cipher("pckey"), nickname: "OpenAI", __secretInputs: [] }),
    gms(
      "Model",
      "gpt-4o",
      guid(3),
      { llm: "gpt-4o", provider: "openai", key: cipher("modelkey"), __linkTo: guid(2) },
      {
        dependencies: [OPENAI],
      },
    ),
    gms(
      "Workflow",
      "support",
      guid(4),
      { name: "Triage", app: guid(1) },
      {
        parent: APP,
        dependencies: [APP],
        propertyDependencies: { app: [APP], name: [] },
      },
      dyn("App"),
    ),
    gms(
      "Dataset",
      "golden",
      guid(5),
      { name: "Golden", app: guid(1), data: [guid(90), guid(91)] },
      {
        dependencies: [APP],
        propertyDependencies: { app: [APP] },
      },
    ),
    gms(
      "Eval",
      "quality",
      guid(6),
      { name: "Quality", action: guid(80), evalTypes: [{ guid: guid(81) }], dataset: guid(5) },
      {
        dependencies: [GOLDEN],
        propertyDependencies: { dataset: [GOLDEN] },
      },
    ),
    gms("ContextSource", "handbook", guid(7), { context: guid(70), url: "https://example.com/handbook.md", name: "Handbook page" }),
    gms("App", "elsewhere", guid(8), { name: "Elsewhere", connection: cipher("otherconnection") }, {
      additionalSecretOutputs: ["connection"],
    } as Partial<StateResource>),
    { urn: TEAM, custom: false, type: "acme:index:Team", parent: STACK },
    gms("App", "team-app", guid(9), { name: "Team app" }, { parent: TEAM }, "acme:index:Team"),
    // What failed runs leave: a placeholder, a partially created fine-tune (whose dataset then stays too), a
    // replaced Experiment pending deletion beside its replacement.
    gms(
      "Skill",
      "web-search",
      "unresolved-0b7d",
      { name: "web-search", type: "web" },
      {
        outputs: { __provider: PROVIDER_TEXT, name: "web-search", __unresolvedCreate: { since: "a", until: "b" } },
      },
    ),
    // Of a fixture App (a literal GUID), so that it depends on nothing in the stack.
    gms("Dataset", "tune-set", guid(10), { name: "Tune set", app: guid(60) }),
    gms(
      "FineTune",
      "tone",
      guid(11),
      { name: "Tone", app: guid(1), dataset: guid(10), dataIds: [1, 2], baseModel: "gpt-4o-mini", providerConnection: 7 },
      {
        dependencies: [TUNE_SET],
        initErrors: ["the fine-tune job failed: bad data"],
      },
    ),
    gms("Experiment", "ab", guid(12), { name: "A/B", app: guid(1) }, { delete: true }),
    gms("Experiment", "ab", guid(13), { name: "A/B", app: guid(1) }),
    // Resources of other packages: one depending on a gms App (which therefore stays), one unrelated dynamic resource.
    gms("App", "downstream", guid(14), { name: "Downstream" }),
    {
      urn: `${PREFIX}::command:local:Command::notify`,
      custom: true,
      id: "notify-1",
      type: "command:local:Command",
      parent: STACK,
      dependencies: [DOWNSTREAM],
    },
    {
      urn: `${PREFIX}::pulumi-nodejs:dynamic:Resource::other`,
      custom: true,
      id: "x",
      type: "pulumi-nodejs:dynamic:Resource",
      parent: STACK,
    },
  ];
  return {
    version: 3,
    deployment: {
      manifest: { time: "2026-11-25T13:19:19.814Z", magic: "294a44", version: "v3.274.1" },
      secrets_providers: { type: "passphrase", state: { salt: "v1:KTP8IiKRzgs=" } },
      resources,
      pending_operations: [{ resource: gms("App", "crashed", "", { name: "Crashed" }), type: "creating" }],
    },
  };
}

const plan = (exported = realisticExport(), options = {}): MigrationPlan => planMigration(exported, { source: "stack.json", ...options });
const entry = (p: MigrationPlan, name: string) => p.importFile.resources.find((candidate) => candidate.name === name)!;
const refusal = (run: () => unknown): MigrationError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MigrationError);
    return error as MigrationError;
  }
  throw new Error("expected a MigrationError");
};

describe("planMigration on a realistic export", () => {
  it("imports every settled gms resource as its native kind, with its GUID as id (a ContextSource's too)", () => {
    const p = plan();
    expect(p.importFile.resources.map((e) => [e.type, e.logicalName ?? e.name, e.id])).toEqual([
      ["gms:index:App", "support", guid(1)],
      ["gms:index:ProviderConnection", "openai", guid(2)],
      ["gms:index:Model", "gpt-4o", guid(3)],
      ["gms:index:Workflow", "support", guid(4)],
      ["gms:index:Dataset", "golden", guid(5)],
      ["gms:index:Eval", "quality", guid(6)],
      ["gms:index:ContextSource", "handbook", guid(7)],
      ["gms:index:App", "elsewhere", guid(8)],
      ["gms:index:App", "team-app", guid(9)],
    ]);
  });

  it("keeps names and parents, so the native URN differs from the dynamic one only in its types", () => {
    const p = plan();
    // Two resources named `support`: the second gets its own handle and keeps its name as logicalName.
    expect(entry(p, "support-Workflow")).toMatchObject({ logicalName: "support", parent: "support" });
    expect(entry(p, "support").parent).toBeUndefined();
    expect(p.importFile.nameTable).toEqual({ team: TEAM });
    expect(entry(p, "team-app").parent).toBe("team");
    expect(p.migrated.map((m) => m.nativeUrn)).toContain(`${PREFIX}::gms:index:App$gms:index:Workflow::support`);
    expect(p.migrated.map((m) => m.nativeUrn)).toContain(`${PREFIX}::acme:index:Team$gms:index:App::team-app`);
    for (const migrated of p.migrated) expect(migrated.nativeUrn).toBe(migrated.urn.replaceAll("pulumi-nodejs:dynamic/gms:", "gms:index:"));
  });

  it("carries the inputs the native schema declares, secrets as the stack's ciphertext, and outputs only for an own connection", () => {
    const p = plan();
    expect(entry(p, "support").inputs).toEqual({ name: "Support", description: null });
    expect(entry(p, "openai").inputs).toEqual({ provider: "openai", key: cipher("pckey"), nickname: "OpenAI" });
    expect(entry(p, "gpt-4o").inputs).toEqual({ llm: "gpt-4o", provider: "openai", key: cipher("modelkey") });
    expect(entry(p, "gpt-4o").outputs).toBeUndefined();
    expect(entry(p, "elsewhere").inputs).toEqual({ name: "Elsewhere", connection: cipher("otherconnection") });
    expect(entry(p, "elsewhere").outputs).toEqual({
      name: "Elsewhere",
      connection: cipher("otherconnection"),
      guid: guid(8),
      createdAt: "2026-11-25T13:19:19.708Z",
    });
    expect(renderImportFile(p)).not.toMatch(/__provider|__secretInputs|__linkTo|__unresolvedCreate/);
    expect(p.notes.some((note) => note.startsWith(`${urn("App", "elsewhere")} has its own \`connection\``))).toBe(true);
    // --with-outputs: every entry, and a plugin version when asked for.
    const all = plan(realisticExport(), { withOutputs: true, pluginVersion: "0.1.0" });
    expect(all.importFile.resources.every((e) => e.outputs?.guid === e.id && e.version === "0.1.0")).toBe(true);
  });

  it("leaves unsettled resources dynamic, with what they depend on and what others outside the migration depend on, each with why", () => {
    const deferred = plan().deferred;
    const reasons = Object.fromEntries(deferred.map((d) => [d.urn, d.reason]));
    expect(deferred.map((d) => d.urn).sort()).toEqual(
      [urn("Skill", "web-search"), TUNE_SET, urn("FineTune", "tone"), urn("Experiment", "ab"), urn("Experiment", "ab"), DOWNSTREAM].sort(),
    );
    expect(reasons[urn("Skill", "web-search")]).toMatch(/placeholder.*`pulumi refresh`/);
    expect(reasons[urn("FineTune", "tone")]).toMatch(/partially created/);
    expect(reasons[TUNE_SET]).toMatch(/FineTune::tone, which stays dynamic, depends on it/);
    expect(reasons[DOWNSTREAM]).toMatch(/command:local:Command::notify depends on it/);
    const experiments = plan()
      .deferred.filter((d) => d.urn === urn("Experiment", "ab"))
      .map((d) => d.reason);
    expect(experiments).toEqual([expect.stringMatching(/pending deletion/), expect.stringMatching(/same URN stays in state/)]);
    // What depends on a staying resource moves (removing a dependent is allowed); the App, which nothing staying needs, moves.
    expect(deferred.map((d) => d.urn)).not.toContain(APP);
  });

  it("leaves the children of a staying gms parent dynamic too, and moves what merely depends on it", () => {
    const exported = realisticExport();
    exported.deployment.resources!.find((r) => r.urn === APP)!.outputs!.__incomplete = true;
    const p = plan(exported);
    const reasons = Object.fromEntries(p.deferred.map((d) => [d.urn, d.reason]));
    expect(reasons[APP]).toMatch(/partially created/);
    expect(reasons[urn("Workflow", "support", dyn("App"))]).toBe(`its parent ${APP} stays dynamic; a native child would keep it in state`);
    expect(p.migrated.map((m) => m.urn)).toContain(GOLDEN);
  });

  it("removes dependents first: the reverse of state's order, so each URN goes before what it depends on", () => {
    const p = plan();
    expect(p.deleteOrder).toEqual([...p.migrated.map((m) => m.urn)].reverse());
    const at = (u: string) => p.deleteOrder.indexOf(u);
    expect(at(urn("Eval", "quality"))).toBeLessThan(at(GOLDEN));
    expect(at(urn("Workflow", "support", dyn("App")))).toBeLessThan(at(APP));
    expect(at(urn("Model", "gpt-4o"))).toBeLessThan(at(OPENAI));
  });

  it("notes pending operations and protected resources", () => {
    const notes = plan().notes.join("\n");
    expect(notes).toContain(`${urn("App", "crashed")}: an interrupted run left a pending \`creating\` operation`);
    expect(notes).toContain(`${APP} is protected`);
  });
});

describe("the files and the summary", () => {
  it("writes a delete script of quoted URNs, --force for protected ones, --stack when given", () => {
    const exported = realisticExport();
    exported.deployment.resources!.push(gms("App", "o'brien", guid(20), { name: "O'Brien" }));
    const script = renderDeleteScript(plan(exported), { importFile: "gms-import.json", stack: "acme/dev" });
    const lines = script.split("\n");
    expect(lines[0]).toBe("#!/bin/sh");
    expect(lines).toContain("set -eu");
    expect(lines).toContain(`pulumi state delete '${PREFIX}::${dyn("App")}::o'\\''brien' --yes --stack 'acme/dev'`);
    expect(lines).toContain(`pulumi state delete '${APP}' --yes --force --stack 'acme/dev'`);
    expect(lines.filter((line) => line.startsWith("pulumi state delete"))).toHaveLength(10);
  });

  it("prints each move, what stays and why, and the next steps, with no secret", () => {
    const summary = renderSummary(plan(), { importFile: "gms-import.json", deleteScript: "gms-state-delete.sh" });
    expect(summary).toContain(
      `  ${urn("ContextSource", "handbook")}\n    -> ${PREFIX}::gms:index:ContextSource::handbook\n       import id ${guid(7)}\n`,
    );
    expect(summary).toContain("6 gms resource(s) stay dynamic");
    expect(summary).toContain("pulumi import --file 'gms-import.json' --protect=false --generate-code=false --yes");
    expect(summary).not.toContain("ciphertext");
  });
});

describe("refusals", () => {
  it("names what the input is when it is not a stack export", () => {
    expect(refusal(() => parseStackExport("{oops", "stack.json")).message).toMatch(
      /^stack\.json is not a Pulumi stack export: it is not JSON/,
    );
    expect(refusal(() => parseStackExport('{"version":3,"checkpoint":{"latest":{}}}', "dev.json")).message).toMatch(/checkpoint file/);
    expect(refusal(() => parseStackExport('{"version":3}', "x.json")).message).toMatch(/no `deployment` object/);
    expect(refusal(() => parseStackExport('{"version":2,"deployment":{}}', "x.json")).message).toMatch(
      /version 2; this command reads version 3/,
    );
    expect(refusal(() => parseStackExport('{"version":3,"deployment":{"resources":[{"id":"x"}]}}', "x.json")).code).toBe("NOT_AN_EXPORT");
  });

  it("refuses an export without gms resources, and one with a kind the package does not know", () => {
    const none = realisticExport();
    none.deployment.resources = none.deployment.resources!.filter((r) => !r.type.startsWith("pulumi-nodejs:dynamic/gms:"));
    expect(refusal(() => plan(none))).toMatchObject({
      code: "NO_GMS_RESOURCES",
      message: expect.stringMatching(/^stack\.json holds 5 resource\(s\), none of them a dynamic gms resource/),
    });
    const odd = realisticExport();
    odd.deployment.resources!.push(gms("Gadget", "g", guid(30), {}));
    expect(refusal(() => plan(odd))).toMatchObject({
      code: "UNKNOWN_KIND",
      message: expect.stringContaining(`${urn("Gadget", "g")} (kind Gadget)`),
    });
  });

  it("refuses secrets shown in plaintext, naming where without the value", () => {
    const shown = realisticExport();
    const pc = shown.deployment.resources!.find((r) => r.urn === OPENAI)!;
    pc.inputs!.key = { [SIG_KEY]: SECRET_SIG, plaintext: '"sk-plaintext-key-123"' };
    const error = refusal(() => plan(shown));
    expect(error.code).toBe("PLAINTEXT_SECRETS");
    expect(error.message).toContain(`${OPENAI} inputs.key`);
    expect(error.message).not.toContain("sk-plaintext-key-123");
    // A declared secret stored as a bare value is refused the same way.
    const bare = realisticExport();
    bare.deployment.resources!.find((r) => r.urn === urn("Model", "gpt-4o"))!.inputs!.key = "sk-bare-key-456";
    expect(refusal(() => plan(bare)).message).not.toContain("sk-bare-key-456");
  });
});

describe("the command", () => {
  const io = (stdin = "") => {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: { readStdin: () => stdin, out: (t: string) => out.push(t), err: (t: string) => err.push(t), env: {}, cwd: process.cwd() },
    };
  };
  const main = (argv: string[], io: Parameters<typeof runCommand>[2]) => runCommand(migrateCommand, argv, io);

  it("reads the export from standard input and writes both files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-migrate-"));
    const run = io(JSON.stringify(realisticExport()));
    const code = await main(["-", "--import-file", join(dir, "i.json"), "--delete-script", join(dir, "d.sh")], run.io);
    expect(code, run.err.join("")).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "i.json"), "utf8")).resources).toHaveLength(9);
    expect(
      readFileSync(join(dir, "d.sh"), "utf8")
        .split("\n")
        .filter((l) => l.startsWith("pulumi state delete")),
    ).toHaveLength(9);
    expect(run.out.join("")).toContain(`Wrote ${join(dir, "i.json")}: 9 native gms resource(s)`);
    rmSync(dir, { recursive: true });
  });

  it("exits 1 with the reason and writes nothing on a bad export, 2 on a usage error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-migrate-"));
    const bad = io("not json");
    expect(await main(["--import-file", join(dir, "i.json"), "--delete-script", join(dir, "d.sh")], bad.io)).toBe(1);
    expect(bad.err.join("")).toMatch(/^pulumi-gms migrate: standard input is not a Pulumi stack export/);
    expect(existsSync(join(dir, "i.json")) || existsSync(join(dir, "d.sh"))).toBe(false);
    const usage = io();
    expect(await main(["--nope"], usage.io)).toBe(2);
    expect(usage.err.join("")).toContain("usage: pulumi-gms migrate");
    rmSync(dir, { recursive: true });
  });

  it("reads the package's schema.json: every kind with its inputs", () => {
    const schema = packageNativeSchema();
    expect(schema.ContextSource.inputs.has("context")).toBe(true);
    expect(schema.ProviderConnection.secrets.has("key")).toBe(true);
    expect(schema.App.inputs.has("__provider")).toBe(false);
  });
});
