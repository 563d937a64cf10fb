/**
 * `pulumi-gms discover` in-process against the emulator: a workspace seeded through the API with several objects
 * of every kind (twins of one name among them) over fixtures holding what the API cannot create. Every object is
 * listed, named uniquely and validly, configured Skills are left out saying why, the keys become config keys with
 * their lines, `--stack` leaves out what a stack manages (its export from a stand-in `pulumi`), no key is ever
 * printed or written, and the exit codes are the commands' contract (0 done, 1 failed, 2 usage).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator";
import type { Discovery } from "../../src/discover/plan";
import { KIND_NAMES, type KindName } from "../../src/resources";
import { nativeToken } from "../../src/provider/tokens";
import { ACME_KEY, fixtureLookups, KINDS_FIXTURES } from "../pulumi-cli/kinds-fixtures";
import { type DiscoverRun, runDiscover } from "./run";
import { type Seeded, seedWorkspace } from "./seed";

type Result = Discovery & { file: string };

const NAME = /^[a-z][a-z0-9_]*$/;

describe("pulumi-gms discover against the emulator", () => {
  let emulator: RunningEmulator;
  let seeded: Seeded;
  let root: string;
  let env: NodeJS.ProcessEnv;
  /** Every line any run printed, and every file it wrote. */
  const printed: string[] = [];
  let folders = 0;

  /** A fresh folder to run in (the command writes its document there). */
  const folder = () => {
    const dir = join(root, `run-${++folders}`);
    mkdirSync(dir);
    return dir;
  };
  const discover = async (argv: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<DiscoverRun> => {
    const run = await runDiscover(argv, { env: options.env ?? env, cwd: options.cwd ?? folder() });
    printed.push(run.out, run.err);
    return run;
  };
  const discoverJson = async (argv: string[] = [], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) => {
    const cwd = options.cwd ?? folder();
    const run = await discover(["--json", ...argv], { ...options, cwd });
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    const result = JSON.parse(run.out) as Result;
    const written = readFileSync(join(cwd, result.file), "utf8");
    printed.push(written);
    expect(JSON.parse(written)).toEqual(result.document);
    return result;
  };
  const kindOf = (guid: string): KindName => KIND_NAMES.find((kind) => seeded.guids[kind].includes(guid))!;

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 0 });
    seeded = await seedWorkspace(await fixtureLookups(emulator));
    root = mkdtempSync(join(tmpdir(), "gms-discover-"));
    env = { PATH: process.env.PATH, GMS_BASE_URL: emulator.url, GMS_API_KEY: ACME_KEY };
  });
  afterAll(async () => {
    await emulator?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("lists every object of every kind and writes each, by type token and GUID, under a unique valid name", async () => {
    const result = await discoverJson();
    expect(result.file).toBe("gms-import.json");
    for (const kind of KIND_NAMES) expect(result.listed[kind], kind).toBe(seeded.guids[kind].length);
    expect(seeded.guids.Skill.length).toBe(4);
    const imported = result.document.resources;
    const expected = KIND_NAMES.flatMap((kind) => seeded.guids[kind]).filter((guid) => !seeded.configuredSkills.includes(guid));
    expect(imported.map((entry) => entry.id).sort()).toEqual(expected.sort());
    for (const entry of imported) expect(entry.type, entry.name).toBe(nativeToken(kindOf(entry.id)));
    const names = imported.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(NAME);
    // Grouped by kind in the kinds' order, by name within a kind.
    const order = imported.map((entry) => KIND_NAMES.indexOf(kindOf(entry.id)));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it("keeps to GMS_MAX_REQUESTS_PER_SECOND under a service's rate limit: the same document, no request refused", async () => {
    const expected = await discoverJson();
    const under = async (rate: string | undefined) => {
      emulator.faults.set("rate=10/s");
      try {
        const result = await discoverJson([], { env: { ...env, GMS_MAX_REQUESTS_PER_SECOND: rate } });
        expect(result.document).toEqual(expected.document);
        return emulator.faults.stats();
      } finally {
        emulator.faults.set(undefined);
      }
    };
    // Without it, the listing outruns the budget and meets 429s (each retried after its Retry-After).
    expect((await under(undefined)).rateLimited).toBeGreaterThan(0);
    const held = await under("10");
    expect(held.requests).toBeGreaterThan(10);
    expect(held.rateLimited).toBe(0);
  });

  it("tells twins apart by kind and by their GUID's first digits, and names the same objects the same every run", async () => {
    const first = await discoverJson();
    const nameOf = new Map(first.document.resources.map((entry) => [entry.id, entry.name]));
    const digits = (guid: string) => guid.replace(/-/g, "").slice(0, 8);
    const [billing, billingTwin, onboarding] = seeded.guids.App.slice(2);
    expect(nameOf.get(billing!)).toBe(`billing_${digits(billing!)}`);
    expect(nameOf.get(billingTwin!)).toBe(`billing_${digits(billingTwin!)}`);
    expect(nameOf.get(onboarding!)).toBe("onboarding");
    // Apps and Datasets of one name, and the Skill copies of the configured one.
    expect(nameOf.get(seeded.guids.App[0]!)).toBe("support");
    for (const guid of seeded.guids.FineTune) expect(nameOf.get(guid)).toBe(`tone_tune_${digits(guid)}`);
    for (const guid of seeded.guids.Skill.slice(2)) expect(nameOf.get(guid)).toBe(`web_search_${digits(guid)}`);
    for (const guid of seeded.guids.ContextSource.slice(0, 2)) expect(nameOf.get(guid)).toBe(`guide_md_${digits(guid)}`);
    expect(nameOf.get(seeded.guids.ContextSource[2]!)).toBe("faq_md");
    const second = await discoverJson();
    expect(second.document).toEqual(first.document);
  });

  it("leaves the configured Skills out, saying why and how to import one all the same", async () => {
    const result = await discoverJson();
    expect(result.leftOut.map((entry) => entry.guid).sort()).toEqual([...seeded.configuredSkills].sort());
    for (const entry of result.leftOut) {
      expect(entry).toMatchObject({ code: "configured-skill", type: "gms:index:Skill" });
      expect(entry.reason).toMatch(/configured outside the public interface/);
      expect(entry.reason).toContain(`pulumi import gms:index:Skill `);
      expect(entry.reason).toContain(entry.guid);
    }
    expect(result.leftOut.map((entry) => entry.object).sort()).toEqual(["code-runner", "web-search"]);
    expect(result.notResources).toMatch(/^Actions, Contexts, Data records and Eval types are not resources but lookups/);
  });

  it("names a config key for each key the service never returns, with the line to set it and the line that reads it", async () => {
    const result = await discoverJson();
    const byGuid = new Map(result.document.resources.map((entry) => [entry.id, entry]));
    const idOf = new Map(result.document.resources.map((entry) => [entry.name, entry.id]));
    // One for each connection and each Model: the objects the API was given a key for.
    expect(result.configKeys.map((key) => idOf.get(key.resource)).sort()).toEqual([...seeded.keys.keys()].sort());
    const configKeys = result.configKeys.map((key) => key.configKey);
    expect(new Set(configKeys).size).toBe(configKeys.length);
    for (const key of result.configKeys) {
      expect(key.property).toBe("key");
      expect(key.configKey).toMatch(/^[a-z][A-Za-z0-9]*Key$/);
      expect(key.setCommand).toBe(`pulumi config set --secret ${key.configKey}`);
      expect(key.programLine).toBe(`key: \${${key.configKey}}`);
      expect(key.where).toBe(`under resources.${key.resource}.properties`);
    }
    expect(result.language).toEqual({ runtime: "yaml", assumed: expect.stringMatching(/^no Pulumi.yaml in /) });
    expect(result.next).toEqual([
      "pulumi import --file gms-import.json --out imported.yaml",
      ...result.configKeys.map((key) => `${key.setCommand}   # ${key.about}`),
      "pulumi preview --expect-no-changes",
    ]);
    // A connection's type, which the service never returns, is recorded where a linked Model shows it.
    const [openai, anthropic, mistral] = seeded.guids.ProviderConnection.map((guid) => byGuid.get(guid)!);
    expect(openai!.inputs).toEqual({ provider: "openai" });
    expect(anthropic!.inputs).toEqual({ provider: "anthropic" });
    expect(mistral!.inputs).toBeUndefined();
    expect(result.notes).toContainEqual({
      resource: mistral!.name,
      type: "gms:index:ProviderConnection",
      property: "provider",
      note: expect.stringMatching(/^provider is never returned by the service, so the generated code leaves it out/),
    });
    for (const guid of seeded.guids.FineTune)
      expect(result.notes).toContainEqual(expect.objectContaining({ resource: byGuid.get(guid)!.name, property: "providerConnection" }));
    expect(result.caveats.map((caveat) => caveat.type)).toEqual(["gms:index:App", "gms:index:Workflow"]);
  });

  it("writes the lines in the project's language (Pulumi.yaml's runtime)", async () => {
    const cwd = folder();
    writeFileSync(join(cwd, "Pulumi.yaml"), "name: adopted\nruntime:\n  name: nodejs\n  options: { typescript: true }\n");
    const result = await discoverJson(["--out", "adopt.json"], { cwd });
    expect(result.file).toBe("adopt.json");
    expect(result.language).toEqual({ runtime: "nodejs", preamble: "const config = new pulumi.Config();" });
    const [key] = result.configKeys;
    expect(key!.programLine).toBe(`key: config.requireSecret("${key!.configKey}"),`);
    expect(result.next[0]).toBe("pulumi import --file adopt.json --out imported.ts");
  });

  it("writes into the import document only what --kind, --name and --exclude pick, and counts the rest", async () => {
    const result = await discoverJson(["--kind", "App,Workflow", "--exclude", "s*"]);
    // The Apps Billing (twice) and Onboarding, and the three Workflows; not Support, Sales, or "Costs"-like names.
    const kinds = result.document.resources.map((entry) => entry.type);
    expect(kinds.filter((type) => type === "gms:index:App")).toHaveLength(3);
    expect(kinds.filter((type) => type === "gms:index:Workflow")).toHaveLength(3);
    expect(kinds).toHaveLength(6);
    const notPicked = result.leftOut.filter((entry) => entry.code === "not-picked");
    expect(notPicked.filter((entry) => entry.type === "gms:index:App").map((entry) => [entry.object, entry.reason])).toEqual([
      ["Support", "not picked: its name matches --exclude s*"],
      ["Sales", "not picked: its name matches --exclude s*"],
    ]);
    // The configured Skills are not of the kinds picked: left out for that, before being configured ones.
    expect(result.leftOut.map((entry) => entry.code)).not.toContain("configured-skill");
    const run = await discover(["--kind", "App"]);
    expect(run.err).toMatch(
      /Wrote gms-import\.json: 5 to import\.\nLeft out, not picked by --kind, --name or --exclude: 28 \(--json lists each\)\./,
    );
  });

  it("prints a summary on stderr, and nothing on stdout, without --json", async () => {
    const cwd = folder();
    const run = await discover([], { cwd });
    expect(run.code).toBe(0);
    expect(run.out).toBe("");
    expect(run.err).toMatch(/^Workspace "Acme" \(/);
    expect(run.err).toContain("Wrote gms-import.json: 31 to import.");
    expect(run.err).toContain('gms:index:Skill "code-runner"');
    expect(run.err).toMatch(/pulumi config set --secret \w+Key +then {3}key: \$\{\w+Key\} {3}under resources\.\w+\.properties/);
    expect(JSON.parse(readFileSync(join(cwd, "gms-import.json"), "utf8")).resources).toHaveLength(31);
  });

  describe("--stack", () => {
    /** A stand-in `pulumi` that records its arguments and prints `answer` (or fails with `exit`). */
    const fakePulumi = (answer: string, exit = 0) => {
      const dir = folder();
      const script = join(dir, "pulumi");
      writeFileSync(join(dir, "answer"), answer);
      writeFileSync(
        script,
        `#!/bin/sh\necho "$@" > "${dir}/args"\ncat "${dir}/answer"\n${exit ? `echo "error: no stack named dev" >&2\nexit ${exit}\n` : ""}`,
      );
      chmodSync(script, 0o755);
      return { script, args: () => readFileSync(join(dir, "args"), "utf8").trim() };
    };
    const exportOf = (resources: object[]) =>
      JSON.stringify({
        version: 3,
        deployment: {
          manifest: {},
          resources: [{ urn: "urn:pulumi:dev::adopted::pulumi:pulumi:Stack::adopted-dev", type: "pulumi:pulumi:Stack" }, ...resources],
        },
      });
    const urn = (type: string, name: string) => `urn:pulumi:dev::adopted::${type}::${name}`;

    it("leaves out what the stack manages, native or dynamic, and keeps off the names it uses", async () => {
      const billing = seeded.guids.App[2]!;
      const model = seeded.guids.Model[0]!;
      const pulumi = fakePulumi(
        exportOf([
          { urn: urn("pulumi:providers:gms", "default"), type: "pulumi:providers:gms", id: "provider-id", custom: true },
          { urn: urn("gms:index:App", "my_billing"), type: "gms:index:App", id: billing, custom: true },
          { urn: urn("pulumi-nodejs:dynamic/gms:Model", "chat"), type: "pulumi-nodejs:dynamic/gms:Model", id: model, custom: true },
          // Another package's resource that happens to use the name discover would give the Onboarding App.
          { urn: urn("random:index/randomPet:RandomPet", "onboarding"), type: "random:index/randomPet:RandomPet", id: "pet", custom: true },
        ]),
      );
      const result = await discoverJson(["--stack", "dev", "--pulumi", pulumi.script]);
      expect(pulumi.args()).toBe("stack export --stack dev --non-interactive");
      const managed = result.leftOut.filter((entry) => entry.code === "managed");
      expect(managed).toEqual([
        {
          code: "managed",
          type: "gms:index:App",
          object: "Billing",
          name: `billing_${billing.replace(/-/g, "").slice(0, 8)}`,
          guid: billing,
          reason: `managed by stack dev as ${urn("gms:index:App", "my_billing")}`,
        },
        {
          code: "managed",
          type: "gms:index:Model",
          object: "gpt-4o",
          name: expect.stringMatching(/^gpt_4o_[0-9a-f]{8}$/),
          guid: model,
          reason: `managed by stack dev as ${urn("pulumi-nodejs:dynamic/gms:Model", "chat")}`,
        },
      ]);
      const ids = result.document.resources.map((entry) => entry.id);
      expect(ids).not.toContain(billing);
      expect(ids).not.toContain(model);
      expect(ids).toHaveLength(29);
      const onboarding = seeded.guids.App[4]!;
      expect(result.document.resources.find((entry) => entry.id === onboarding)!.name).toBe(
        `onboarding_${onboarding.replace(/-/g, "").slice(0, 8)}`,
      );
      expect(result.next[0]).toBe("pulumi import --file gms-import.json --out imported.yaml --stack dev");
      for (const key of result.configKeys) expect(key.setCommand).toBe(`pulumi config set --secret ${key.configKey} --stack dev`);
    });

    it("fails, saying why, when the stack cannot be read", async () => {
      const missing = await discover(["--stack", "dev", "--pulumi", join(root, "no-such-pulumi")]);
      expect(missing.code).toBe(1);
      expect(missing.err).toMatch(/cannot run .*no-such-pulumi: not found \(put the Pulumi CLI on PATH, or give its path with --pulumi\)/);
      const failing = await discover(["--stack", "dev", "--pulumi", fakePulumi("", 255).script]);
      expect(failing.code).toBe(1);
      expect(failing.err).toMatch(/`.*pulumi stack export --stack dev` failed: error: no stack named dev/);
      const notExport = await discover(["--stack", "dev", "--pulumi", fakePulumi('{"checkpoint": {}}').script]);
      expect(notExport.code).toBe(1);
      expect(notExport.err).toMatch(/the export of stack dev is a checkpoint file of a backend, not a stack export/);
    });
  });

  describe("exit codes", () => {
    it("--help prints the usage and exits 0", async () => {
      const run = await discover(["--help"]);
      expect(run).toMatchObject({ code: 0, err: "" });
      expect(run.out).toMatch(
        /^usage: pulumi-gms discover \[--language yaml\|typescript\|python\|go\] \[--split-by app\] \[--out PATH\] \[--new-stack NAME\]/,
      );
      expect(run.out).toContain("--language LANG      write instead the program that adopts it all");
    });

    it.each([
      [["--bogus"], {}, /Unknown option '--bogus'/],
      [["extra"], {}, /discover takes no arguments, only flags \(got extra\)/],
      [["--out", ""], {}, /--out needs a value/],
      [["--split-by", "team"], {}, /--split-by team is not known: the one split is --split-by app/],
      [["--kind", "Workflows"], {}, /--kind Workflows is not a kind: use one of App, ProviderConnection, Model/],
      [["--exclude", ""], {}, /--exclude needs a glob, for example --exclude 'billing\*'/],
      [[], { GMS_BASE_URL: undefined }, /GMS_BASE_URL is not set/],
      [[], { GMS_BASE_URL: "http://127.0.0.1:1/api" }, /GMS_BASE_URL must be an http\(s\) URL ending in \/v1/],
      [[], { GMS_API_KEY: undefined }, /no API key: set GMS_API_KEY, or give a file holding it with --api-key-file/],
      [[], { GMS_MAX_RETRIES: "many" }, /GMS_MAX_RETRIES must be a whole number of 0 or more, not "many"/],
      [
        [],
        { GMS_MAX_REQUESTS_PER_SECOND: "fast" },
        /GMS_MAX_REQUESTS_PER_SECOND must be a number of requests per second above 0, .*not "fast"/,
      ],
      [["--api-key-file", "missing.key"], {}, /--api-key-file missing.key: cannot read it \(ENOENT\)/],
    ] as [string[], NodeJS.ProcessEnv, RegExp][])("%j with %j is a usage error: 2", async (argv, changed, message) => {
      const run = await discover(argv, { env: { ...env, ...changed } });
      expect(run.code).toBe(2);
      expect(run.out).toBe("");
      expect(run.err).toMatch(message);
      expect(run.err).toContain("usage: pulumi-gms discover");
    });

    it("refuses a key given as a flag, without printing it: 2", async () => {
      for (const argv of [["--api-key=gms_flag_key_0c1d"], ["--api-key", "gms_flag_key_0c1d"]]) {
        const run = await discover(argv);
        expect(run.code).toBe(2);
        expect(run.err).toMatch(
          /^pulumi-gms discover: the API key is never a flag \(the process list and the shell's history would show it\)/,
        );
        expect(run.err).not.toContain("gms_flag_key_0c1d");
      }
    });

    it("reads the key from --api-key-file", async () => {
      const cwd = folder();
      writeFileSync(join(cwd, "gms.key"), `${ACME_KEY}\n`);
      const result = await discoverJson(["--api-key-file", "gms.key"], { cwd, env: { ...env, GMS_API_KEY: undefined } });
      expect(result.document.resources).toHaveLength(31);
    });

    it("fails with 1, the key unprinted, when the service refuses the key", async () => {
      const wrong = "gms_wrong_key_b52e77";
      const run = await discover([], { env: { ...env, GMS_API_KEY: wrong } });
      expect(run.code).toBe(1);
      expect(run.err).toBe(
        `pulumi-gms discover: the service at ${emulator.url} refused the API key (401 Invalid API key): ` +
          "GMS_API_KEY (or --api-key-file) must be a key of the workspace to list\n",
      );
      expect(run.err).not.toContain(wrong);
    });

    it("fails with 1 when the service cannot be reached", async () => {
      const port = await new Promise<number>((resolve) => {
        const server = createServer().listen(0, "127.0.0.1", () => {
          const { port } = server.address() as { port: number };
          server.close(() => resolve(port));
        });
      });
      const run = await discover([], { env: { ...env, GMS_BASE_URL: `http://127.0.0.1:${port}/v1`, GMS_MAX_RETRIES: "0" } });
      expect(run.code).toBe(1);
      expect(run.err).toMatch(
        new RegExp(`^pulumi-gms discover: cannot reach the service at http://127.0.0.1:${port}/v1 \\(GMS_BASE_URL\\): `),
      );
    });
  });

  it("runs as a user runs it, through the pulumi-gms executable", async () => {
    const cwd = folder();
    // Asynchronous: the emulator answers from this process.
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [join(__dirname, "..", "..", "dist", "cli", "main.js"), "discover", "--json"],
      { cwd, env, encoding: "utf8" },
    );
    printed.push(stdout, stderr);
    const result = JSON.parse(stdout) as Result;
    expect(result.document.resources.length).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(join(cwd, "gms-import.json"), "utf8"))).toEqual(result.document);
  });

  it("never prints or writes a key", () => {
    const secrets = [ACME_KEY, ...seeded.keys.values()];
    expect(printed.length).toBeGreaterThan(20);
    for (const text of printed) for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
