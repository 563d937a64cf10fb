/**
 * Unknown keys of a workspace document: each reported on its own at its key (file:line:column), naming the
 * nearest key its object accepts when it is close enough to be a typo, at every level where the document is
 * strict: the sections, an entry's fields, nested objects, and objects that are options of a union.
 */
import { describe, expect, it } from "vitest";
import { editDistance, nearestKey, unknownKeyMessage } from "../../src/workspace/suggest";
import { WorkspaceSpecError, loadWorkspaceObject, loadWorkspaceText } from "../../src/workspace/spec";

/** The lines of the error a document fails with (the source name is `w.yaml`). */
function problems(text: string): string[] {
  try {
    loadWorkspaceText(text, "w.yaml", __dirname);
  } catch (error) {
    expect(error).toBeInstanceOf(WorkspaceSpecError);
    return (error as Error).message.split("\n");
  }
  throw new Error("the document was accepted");
}

const APP = "apps:\n  bot:\n    name: Bot\n";

describe("edit distance and the nearest key", () => {
  it("counts insertions, deletions, substitutions and adjacent swaps as one edit each, ignoring case", () => {
    expect(editDistance("description", "description")).toBe(0);
    expect(editDistance("descripton", "description")).toBe(1);
    expect(editDistance("descriptoin", "description")).toBe(1);
    expect(editDistance("Description", "description")).toBe(0);
    expect(editDistance("nme", "name")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  it("suggests only a key close enough to be a typo, the first declared of equally near ones", () => {
    expect(nearestKey("descripton", ["name", "description"])).toBe("description");
    expect(nearestKey("nme", ["name", "description"])).toBe("name");
    expect(nearestKey("temperature", ["name", "description"])).toBeUndefined();
    expect(nearestKey("url", ["uri", "urn"])).toBe("uri");
    expect(nearestKey("xyz", ["name"])).toBeUndefined();
    expect(nearestKey("a", [])).toBeUndefined();
    expect(unknownKeyMessage("descripton", ["description"])).toBe('unknown key; did you mean "description"?');
    expect(unknownKeyMessage("color", ["description"])).toBe("unknown key");
  });
});

describe("unknown keys of a workspace document", () => {
  it("a top-level section", () => {
    expect(problems(`${APP}modles:\n  m:\n    llm: gpt-4o\n`)).toEqual(['w.yaml:4:1: modles: unknown key; did you mean "models"?']);
    expect(problems(`${APP}providerconnections: {}\n`)).toEqual([
      'w.yaml:4:1: providerconnections: unknown key; did you mean "providerConnections"?',
    ]);
  });

  it("an entry's field, each unknown key of one entry on its own", () => {
    expect(problems(`${APP}    descripton: Customer support\n    nmae: Bot\n`)).toEqual([
      'w.yaml:4:5: apps.bot.descripton: unknown key; did you mean "description"?',
      'w.yaml:5:5: apps.bot.nmae: unknown key; did you mean "name"?',
    ]);
  });

  it("a nested field: an object inside an entry, and an element of a list", () => {
    const evals = `${APP}datasets:\n  d:\n    name: D\nevals:\n  live:\n    name: Live\n    dataset: d\n`;
    expect(problems(`${evals}    action: { app: bot, action: Summarize, ap: x }\n    evalTypes: [Toxicity]\n`)).toEqual([
      'w.yaml:11:44: evals.live.action.ap: unknown key; did you mean "app"?',
    ]);
    expect(problems(`${evals}    action: { app: bot, action: Summarize }\n    evalTypes: [{ type: T, varaibles: [] }]\n`)).toEqual([
      'w.yaml:12:28: evals.live.evalTypes.0.varaibles: unknown key; did you mean "variables"?',
    ]);
  });

  it("an object that is an option of a union keeps the union's message and names the key no option accepts", () => {
    const connection = "providerConnections:\n  openai:\n    nickname: OpenAI\n    provider: openai\n";
    expect(problems(`${connection}    key: { confg: openaiKey }\n`)).toEqual([
      "w.yaml:5:10: providerConnections.openai.key: must be { config: <stack config key> } or { env: <environment variable> }: " +
        'secrets are never written in the file (unknown key "confg"; did you mean "config"?)',
    ]);
    // Each key belongs to one option: nothing is unknown to both, so there is nothing to suggest.
    expect(problems(`${connection}    key: { config: openaiKey, env: OPENAI_KEY }\n`)).toEqual([
      "w.yaml:5:10: providerConnections.openai.key: must be { config: <stack config key> } or { env: <environment variable> }: " +
        "secrets are never written in the file",
    ]);
  });

  it("a far-off key gets no suggestion", () => {
    expect(problems(`${APP}    temperature: 0.2\n`)).toEqual(["w.yaml:4:5: apps.bot.temperature: unknown key"]);
    expect(problems(`${APP}resources: {}\n`)).toEqual(["w.yaml:4:1: resources: unknown key"]);
  });

  it("a document given as an object gets the same messages, by field path", () => {
    expect(() => loadWorkspaceObject({ apps: { bot: { name: "Bot", descripton: "x" } } }, "spec")).toThrow(
      'spec: apps.bot.descripton: unknown key; did you mean "description"?',
    );
    expect(() => loadWorkspaceObject({ apps: { bot: { name: "Bot", colour: "blue" } } }, "spec")).toThrow(
      "spec: apps.bot.colour: unknown key",
    );
  });
});
