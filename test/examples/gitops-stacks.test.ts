/**
 * examples/gitops/stacks.ts, the stack list (gms-stacks.yaml) as /work/notes' decision defines it: its parser, with an
 * error that names the key and the fix for each way a list can be wrong; the levels the merge applies; which entries a
 * change touches (a file in an entry's folder or its settings file, a shared path, the list itself, and the dependents
 * of a touched entry); and the files a git history says changed. And two of pipeline.ts's pure helpers: which
 * StackReference names a stack, and a stack's secrets settings as its state records them. Needs no CLI.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  changedFilesSince,
  entryOf,
  levelsOf,
  parseStackList,
  readStackList,
  StackListError,
  touchedEntries,
  withDependents,
} from "../../examples/gitops/stacks.ts";
import { describeSecretsSettings, referenceNames, secretsSettingsOfState } from "../../examples/gitops/pipeline.ts";
import { GITOPS } from "./gitops-harness";

const FILE = "/repo/gms-stacks.yaml";

/** The decision's example, with a third entry that depends on the second. */
const LIST = `# gms-stacks.yaml
shared:
  - lib/
stacks:
  shared:
    dir: shared
    stack: dev
    config: shared/Pulumi.dev.yaml
  support:
    dir: apps/support
    stack: dev
    dependsOn: [shared]
  billing:
    dir: apps/billing
    stack: dev
    dependsOn: [shared]
  reports:
    dir: apps/reports
    stack: dev
    dependsOn: [support]
`;

const list = parseStackList(LIST, FILE);
const refused = (text: string) => {
  try {
    parseStackList(text, FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(StackListError);
    return (error as Error).message;
  }
  throw new Error("the list was accepted");
};

describe("gms-stacks.yaml: the parser", () => {
  it("reads the decision's shape: shared paths, entries in the file's order, each settings file", () => {
    expect(list.shared).toEqual(["lib"]);
    expect(list.root).toBe("/repo");
    expect(list.entries.map((entry) => entry.name)).toEqual(["shared", "support", "billing", "reports"]);
    expect(entryOf(list, "shared")).toEqual({
      name: "shared",
      dir: "shared",
      stack: "dev",
      config: "shared/Pulumi.dev.yaml",
      configGiven: true,
      dependsOn: [],
    });
    // The default settings file, `<dir>/Pulumi.<stack>.yaml`; the stack's last part on Pulumi Cloud.
    expect(entryOf(list, "support")).toMatchObject({ config: "apps/support/Pulumi.dev.yaml", configGiven: false, dependsOn: ["shared"] });
    const cloud = parseStackList("stacks:\n  a:\n    dir: ./a/\n    stack: acme/prod\n", FILE);
    expect(cloud.entries[0]).toMatchObject({ dir: "a", config: "a/Pulumi.prod.yaml" });
    expect(parseStackList("shared:\nstacks:\n  a: { dir: a, stack: dev }\n", FILE).shared).toEqual([]);
  });

  it("refuses each way a list can be wrong, naming the key and the fix", () => {
    expect(refused("stacks:\n  a: { dir: a, stack: dev }\nstack: x\n")).toBe(
      `${FILE}: stack is not a key of the stack list: remove it (the keys are shared, stacks)`,
    );
    expect(refused("stacks:\n  a: { dir: a, stack: dev, dependson: [b] }\n")).toBe(
      `${FILE}: stacks.a.dependson is not a key of stacks.a: did you mean dependsOn?`,
    );
    expect(refused("stacks:\n  a: { dir: a, stack: dev, config: x, owner: me }\n")).toBe(
      `${FILE}: stacks.a.owner is not a key of stacks.a: remove it (the keys are dir, stack, config, dependsOn)`,
    );
    expect(refused("stacks:\n  a: { dir: a, stack: dev, dependsOn: [b] }\n")).toBe(
      `${FILE}: stacks.a.dependsOn[0] names b, which is no entry of stacks: use one of a, or add the entry`,
    );
    expect(
      refused(
        "stacks:\n  a: { dir: a, stack: dev, dependsOn: [c] }\n  b: { dir: b, stack: dev, dependsOn: [a] }\n  c: { dir: c, stack: dev, dependsOn: [b] }\n",
      ),
    ).toBe(
      `${FILE}: stacks depend on each other in a cycle (a → c → b → a): a stack can read only stacks applied before it; remove one of these dependsOn`,
    );
    expect(refused("stacks:\n  a: { dir: a, stack: dev, dependsOn: [a] }\n")).toContain("in a cycle (a → a)");
    expect(refused("stacks:\n  a: { dir: x, stack: dev }\n  b: { dir: x/, stack: dev }\n")).toBe(
      `${FILE}: stacks.b and stacks.a are both stack dev of x: one stack must have one entry; remove one, or give it another stack`,
    );
    expect(refused("stacks:\n  a: { dir: a, stack: dev }\n  a: { dir: b, stack: dev }\n")).toMatch(
      /^\/repo\/gms-stacks\.yaml: not valid YAML: Map keys must be unique at line 3, column 3: each entry's name \(and each key\) may appear once/,
    );
    expect(refused("stacks:\n  a: { stack: dev }\n")).toBe(
      `${FILE}: stacks.a.dir is missing: give the program's folder (holding Pulumi.yaml)`,
    );
    expect(refused("stacks:\n  a: { dir: a }\n")).toBe(
      `${FILE}: stacks.a.stack is missing: give the Pulumi stack name, e.g. \`stack: prod\``,
    );
    expect(refused("stacks:\n  a: { dir: a, stack: 'my stack' }\n")).toContain("stacks.a.stack (my stack) is not a Pulumi stack name");
    expect(refused("stacks:\n  Support_App: { dir: a, stack: dev }\n")).toBe(
      `${FILE}: stacks.Support_App: an entry's name may hold only a-z, 0-9 and -: rename it (e.g. support-app)`,
    );
    expect(refused("stacks:\n  a: { dir: /abs, stack: dev }\n")).toContain("stacks.a.dir is an absolute path (/abs): give it relative to");
    expect(refused("stacks:\n  a: { dir: a, stack: dev, dependsOn: b }\n")).toContain("stacks.a.dependsOn must be a list of entry names");
    expect(refused("shared: lib\nstacks:\n  a: { dir: a, stack: dev }\n")).toContain("shared must be a list of folders or files");
    expect(refused("stacks: {}\n")).toContain("stacks is missing or empty: add one entry per stack");
    expect(refused("- a\n")).toContain("must be a mapping with a `stacks:` key");
    expect(refused("stacks:\n  a: [x\n")).toMatch(/not valid YAML: .* at line \d+, column \d+$/);
  });

  it("reads a file and checks that each folder holds a program", () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-stacks-"));
    try {
      mkdirSync(join(dir, "a"));
      writeFileSync(join(dir, "gms-stacks.yaml"), "stacks:\n  a: { dir: a, stack: dev }\n");
      expect(() => readStackList(join(dir, "gms-stacks.yaml"))).toThrow(
        `${join(dir, "gms-stacks.yaml")}: stacks.a.dir (a) holds no Pulumi.yaml: name the folder of the stack's program`,
      );
      writeFileSync(join(dir, "a", "Pulumi.yaml"), "name: a\n");
      expect(readStackList(join(dir, "gms-stacks.yaml")).entries).toHaveLength(1);
      expect(() => readStackList(join(dir, "missing.yaml"))).toThrow("cannot read the stack list (ENOENT)");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The example's own list: a shared stack and one per App, each a program.
    expect(readStackList(join(GITOPS, "gms-stacks.yaml")).entries.map((entry) => [entry.name, entry.dependsOn])).toEqual([
      ["shared", []],
      ["helpdesk", ["shared"]],
      ["sales", ["shared"]],
    ]);
  });
});

describe("gms-stacks.yaml: levels and what a change touches", () => {
  it("orders entries by level among those chosen: a dependency in an earlier level, the rest as early as they can run", () => {
    expect(levelsOf(list, ["shared", "support", "billing", "reports"])).toEqual([["shared"], ["support", "billing"], ["reports"]]);
    // Without the stacks it depends on, an entry runs at once.
    expect(levelsOf(list, ["reports", "billing"])).toEqual([["billing", "reports"]]);
    expect(levelsOf(list, ["support", "reports"])).toEqual([["support"], ["reports"]]);
    expect(levelsOf(list, [])).toEqual([]);
    expect(withDependents(list, ["support"])).toEqual(["support", "reports"]);
  });

  it("touches an entry by a file in its folder or its settings file, every entry by a shared path, and the dependents", () => {
    const reasons = (changed: string[], before?: typeof list) => Object.fromEntries(touchedEntries(list, changed, before));
    expect(reasons(["apps/billing/index.ts"])).toEqual({ billing: "`apps/billing/index.ts` is in its folder (apps/billing)" });
    expect(reasons(["apps/support/index.ts"])).toEqual({
      support: "`apps/support/index.ts` is in its folder (apps/support)",
      reports: "it depends on support, which this change touches",
    });
    expect(reasons(["shared/Pulumi.dev.yaml"])).toEqual({
      shared: "`shared/Pulumi.dev.yaml` is its settings file",
      support: "it depends on shared, which this change touches",
      billing: "it depends on shared, which this change touches",
      reports: "it depends on support, which this change touches",
    });
    expect(Object.keys(reasons(["lib/names.ts"]))).toEqual(["shared", "support", "billing", "reports"]);
    expect(reasons(["lib/names.ts"]).billing).toBe("`lib/names.ts` is shared by every stack (gms-stacks.yaml `shared: lib`)");
    expect(reasons(["README.md", "apps/supportive/x.ts", "library/x.ts"])).toEqual({});
    // The list itself: the entries that are new or differ from the list before; every one without a list before.
    const before = parseStackList(
      LIST.replace("    stack: dev\n    dependsOn: [shared]\n  reports", "    stack: prod\n    dependsOn: [shared]\n  reports"),
      FILE,
    );
    expect(Object.keys(reasons(["gms-stacks.yaml"], before))).toEqual(["billing"]);
    expect(Object.keys(reasons(["gms-stacks.yaml"]))).toEqual(["shared", "support", "billing", "reports"]);
  });

  it("lists the files changed since a commit, renames at both paths, relative to the list's folder, and the list as it was", () => {
    const repo = mkdtempSync(join(tmpdir(), "gms-stacks-git-"));
    const git = (...args: string[]) => {
      const run = spawnSync("git", args, { cwd: repo, encoding: "utf8" });
      if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
      return run.stdout.trim();
    };
    try {
      git("init", "-q", "-b", "main");
      git("config", "user.email", "t@example.com");
      git("config", "user.name", "t");
      mkdirSync(join(repo, "infra", "a"), { recursive: true });
      mkdirSync(join(repo, "infra", "b"), { recursive: true });
      writeFileSync(join(repo, "infra", "gms-stacks.yaml"), "stacks:\n  a: { dir: a, stack: dev }\n  b: { dir: b, stack: dev }\n");
      for (const name of ["a", "b"]) writeFileSync(join(repo, "infra", name, "Pulumi.yaml"), `name: ${name}\n`);
      writeFileSync(join(repo, "infra", "a", "old.ts"), "");
      git("add", ".");
      git("commit", "-q", "-m", "base");
      const base = git("rev-parse", "HEAD");
      git("mv", "infra/a/old.ts", "infra/b/new.ts");
      writeFileSync(join(repo, "infra", "gms-stacks.yaml"), "stacks:\n  a: { dir: a, stack: dev }\n  b: { dir: b, stack: prod }\n");
      git("add", ".");
      git("commit", "-q", "-m", "change");
      const stacks = readStackList(join(repo, "infra", "gms-stacks.yaml"));
      const { changed, before } = changedFilesSince(stacks, base);
      expect(changed.sort()).toEqual(["a/old.ts", "b/new.ts", "gms-stacks.yaml"]);
      expect(before?.entries.map((entry) => entry.stack)).toEqual(["dev", "dev"]);
      expect(Object.fromEntries(touchedEntries(stacks, changed, before))).toEqual({
        a: "`a/old.ts` is in its folder (a)",
        b: "`b/new.ts` is in its folder (b)",
      });
      expect(() => changedFilesSince(stacks, "0123456789abcdef0123456789abcdef01234567")).toThrow(
        /cannot list the files changed since 0123456789abcdef0123456789abcdef01234567 .*fetch-depth: 0/,
      );
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe("pipeline.ts: which StackReference a review holds unknown, and a stack's secrets settings from its state", () => {
  it("knows a stack's reference by its full name, by org/stack and by stack from a program of the same project", () => {
    const shared = { project: "gms-shared", stack: "prod" };
    expect(referenceNames("organization/gms-shared/prod", shared, "gms-helpdesk")).toBe(true);
    expect(referenceNames("acme/gms-shared/prod", shared, "gms-helpdesk")).toBe(true);
    expect(referenceNames("acme/gms-shared/dev", shared, "gms-helpdesk")).toBe(false);
    expect(referenceNames("organization/gms-sales/prod", shared, "gms-helpdesk")).toBe(false);
    // A short name is of the program's own project.
    expect(referenceNames("prod", shared, "gms-shared")).toBe(true);
    expect(referenceNames("acme/prod", shared, "gms-helpdesk")).toBe(false);
    expect(referenceNames("prod", { project: "gms-shared", stack: "acme/prod" }, "gms-shared")).toBe(true);
  });

  it("reads the settings a checkout needs from the state's secrets provider record, and describes them by a digest", () => {
    const salt = "v1:1CyBJofehjs=:v1:l8XJSaf/2fPaqiUe:Qx6fFNxG6PeGu9KPfstVCC7kHY33Dw==";
    expect(secretsSettingsOfState({ type: "passphrase", state: { salt } })).toEqual({ encryptionSalt: salt });
    const url = "awskms://1234abcd?region=us-east-1&endpoint=http://127.0.0.1:4566";
    expect(secretsSettingsOfState({ type: "cloud", state: { url, encryptedkey: "ZGF0YQ==" } })).toEqual({
      secretsProvider: url,
      encryptedKey: "ZGF0YQ==",
    });
    expect(secretsSettingsOfState({ type: "service", state: { url: "https://api.pulumi.com", owner: "acme" } })).toBeUndefined();
    expect(secretsSettingsOfState(undefined)).toBeUndefined();
    expect(describeSecretsSettings({ encryptionSalt: salt })).toMatch(/^passphrase \(settings sha256:[0-9a-f]{12}\)$/);
    expect(describeSecretsSettings({ secretsProvider: url, encryptedKey: "ZGF0YQ==" })).toMatch(
      /^awskms:\/\/1234abcd \(settings sha256:[0-9a-f]{12}\)$/,
    );
    expect(describeSecretsSettings({})).toBe("service");
    expect(describeSecretsSettings({ encryptionSalt: salt })).not.toContain(salt);
  });
});
