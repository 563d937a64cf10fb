/**
 * Fixture requirements (issue 22): each violation is an error naming its place in the file as the file
 * reads (`workspaces[1].apiKey`), what is wrong and what to write instead.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Fixtures, Store, loadFixtures, readFixturesFile } from "../../src/emulator";
import { fixturePath } from "../../src/emulator/fixtures";

/** One folder for every fixtures file of this suite, removed after it. */
const folder = mkdtempSync(join(tmpdir(), "gms-fixtures-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let written = 0;

function writeFixtures(text: string): string {
  const file = join(folder, `fixtures-${++written}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** The problems of a fixtures file, one per line, without the file name. */
function problems(text: string): string[] {
  const file = writeFixtures(text);
  try {
    readFixturesFile(file);
  } catch (error) {
    return (error as Error).message.split("\n").map((line) => line.replace(`${file}:`, ""));
  }
  throw new Error("the fixtures were accepted");
}

describe("fixtures file requirements", () => {
  it("accepts the fixtures every example ships", () => {
    for (const example of ["quickstart", "smoke", "yaml-workspace"]) {
      expect(() => readFixturesFile(join(__dirname, "..", "..", "examples", example, "fixtures.yaml")), example).not.toThrow();
    }
  });

  it("names each workspace violation by its path, with what to write", () => {
    expect(
      problems(
        [
          "workspaces:",
          "  - name: Acme",
          "    slug: acme",
          "    apiKey: gms_acme_key",
          "  - name: Beta",
          "    apiKey: short",
          "  - name: Gamma",
          "    slug: Gamma Corp",
          "    apiKey: gms_gamma_key",
          "    limits: { apps: -1, widgets: 3 }",
          "    colour: blue",
          "",
        ].join("\n"),
      ),
    ).toEqual([
      "5:5: workspaces[1].slug: is required: the workspace's slug: lowercase letters, digits and dashes, e.g. acme",
      "6:13: workspaces[1].apiKey: must be at least 8 characters: the key that selects this workspace, e.g. gms_acme_key",
      "8:11: workspaces[2].slug: must be lowercase letters, digits and dashes, starting with a letter or digit (e.g. gamma-corp)",
      "10:21: workspaces[2].limits.apps: must be a whole number, 0 or more",
      "10:25: workspaces[2].limits.widgets: is not a feature with a limit; the features are " +
        "apps, workflows, datasets, evals, experiments, skills, models, providers, context_sources",
      "11:5: workspaces[2].colour: is not a field of a workspace; its fields are guid, name, slug, apiKey, limits, apps, contexts, skills",
    ]);
  });

  it("never repeats an API key in a message", () => {
    expect(problems("workspaces:\n  - { name: Acme, slug: acme, apiKey: sk-7x }\n").join("\n")).not.toContain("sk-7x");
  });

  it("names violations inside Apps, Actions, Workflows, Data and Skills, with what they need", () => {
    expect(
      problems(
        [
          "workspaces:",
          "  - name: Acme",
          "    slug: acme",
          "    apiKey: gms_acme_key",
          "    apps:",
          "      - name: Support",
          "        actions:",
          "          - { name: Summarize }",
          "          - { name: Classify, prompt: 'x', environments: [] }",
          "        data:",
          "          - { action: Summarize, input: hi }",
          "    skills:",
          "      - { name: web-search }",
          "",
        ].join("\n"),
      ),
    ).toEqual([
      "8:13: workspaces[0].apps[0].actions[0].prompt: is required: the Action's prompt; its {{...}} placeholders are its variables",
      "9:58: workspaces[0].apps[0].actions[1].environments: must list at least one environment (leave it out for Production only)",
      "11:13: workspaces[0].apps[0].data[0].output: is required: a string, a list or a map",
      "13:9: workspaces[0].skills[0].type: is required: the Skill's type, e.g. web",
    ]);
    expect(
      problems(
        [
          "workspaces:",
          "  - name: Acme",
          "    slug: acme",
          "    apiKey: gms_acme_key",
          "    apps:",
          "      - name: Support",
          "        actions: [{ name: Summarize, prompt: 'Summarize {{text}}' }]",
          "        workflows: [{ name: Triage, blocks: [{ name: First, action: Summarise }] }]",
          "",
        ].join("\n"),
      ),
    ).toEqual([
      '8:69: workspaces[0].apps[0].workflows[0].blocks[0].action: unknown Action "Summarise" of App "Support" (its Actions: "Summarize")',
    ]);
  });

  it("refuses two workspaces with one slug or one key, naming the first", () => {
    expect(
      problems(
        [
          "workspaces:",
          "  - { name: Acme, slug: acme, apiKey: gms_acme_key }",
          "  - { name: Acme again, slug: acme, apiKey: gms_other_key }",
          "  - { name: Beta, slug: beta, apiKey: gms_acme_key }",
          "",
        ].join("\n"),
      ),
    ).toEqual([
      "3:31: workspaces[1].slug: is workspaces[0]'s slug too; slugs must differ",
      "4:39: workspaces[2].apiKey: is workspaces[0]'s key too; each workspace needs its own",
    ]);
  });

  it("words fixtures given as an object the same way", () => {
    const store = new Store(":memory:");
    try {
      const fixtures = {
        workspaces: [
          { name: "Acme", apiKey: "gms_ok_key" },
          { name: "Beta", slug: "beta", apiKey: "abc" },
        ],
      } as Fixtures;
      expect(() => loadFixtures(store, fixtures)).toThrow(
        "fixtures: invalid fixtures\n" +
          "  workspaces[0].slug: is required: the workspace's slug: lowercase letters, digits and dashes, e.g. acme\n" +
          "  workspaces[1].apiKey: must be at least 8 characters: the key that selects this workspace, e.g. gms_acme_key",
      );
    } finally {
      store.close();
    }
  });

  it("writes paths as the file reads them", () => {
    expect(fixturePath(["workspaces", 1, "apiKey"])).toBe("workspaces[1].apiKey");
    expect(fixturePath(["workspaces", "0", "apps", "2", "data", "0", "action"])).toBe("workspaces[0].apps[2].data[0].action");
    expect(fixturePath([])).toBe("");
  });
});
