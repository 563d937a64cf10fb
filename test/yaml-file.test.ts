import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { readFixturesFile } from "../src/emulator/fixtures";
import { parseYaml } from "../src/yaml-file";
import { z } from "zod";

const Schema = z.strictObject({ items: z.array(z.strictObject({ name: z.string(), size: z.number().optional() })) });

describe("YAML with located errors", () => {
  it("returns the validated value", () => {
    expect(parseYaml("items:\n  - name: a\n    size: 2\n", "x.yaml", Schema)).toEqual({ items: [{ name: "a", size: 2 }] });
  });

  it("locates syntax errors", () => {
    expect(() => parseYaml("items:\n  - name: a\n   bad: [\n", "x.yaml", Schema)).toThrow(/^x\.yaml:3:\d+: /);
  });

  it("locates a wrong type, an unknown field and a missing field at their own line and column", () => {
    const text = "items:\n  - name: a\n    size: big\n  - name: b\n    colour: red\n  - size: 3\n";
    let message = "";
    try {
      parseYaml(text, "w.yaml", Schema);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split("\n")).toEqual([
      "w.yaml:3:11: items.0.size: Invalid input: expected number, received string",
      'w.yaml:5:5: items.1.colour: Unrecognized key: "colour"',
      "w.yaml:6:5: items.2.name: is required",
    ]);
  });

  it("says a missing field is required, and keeps zod's message for a present value of the wrong type (null included)", () => {
    const Required = z.strictObject({
      name: z.string(),
      kind: z.union([z.strictObject({ a: z.string() }), z.strictObject({ b: z.string() })], { error: "must be {a} or {b}" }),
    });
    const messages = (text: string) => {
      try {
        parseYaml(text, "r.yaml", Required);
      } catch (error) {
        return (error as Error).message.split("\n");
      }
      throw new Error("accepted");
    };
    expect(messages("")).toEqual(["r.yaml:1:1: name: is required", "r.yaml:1:1: kind: is required"]);
    expect(messages("name:\nkind: x\n")).toEqual([
      "r.yaml:1:6: name: Invalid input: expected string, received null",
      "r.yaml:2:7: kind: must be {a} or {b}",
    ]);
    expect(messages("name: n\nkind: {}\n")).toEqual(["r.yaml:2:7: kind: must be {a} or {b}"]);
  });

  it("rejects duplicate keys at the second, with the path of the map and the key", () => {
    expect(() => parseYaml("items: []\nitems: []\n", "d.yaml", Schema)).toThrow(
      /^d\.yaml:2:1: items: duplicate key "items" \(Map keys must be unique\)$/,
    );
    expect(() => parseYaml("items:\n  - name: a\n  - name: b\n    size: 1\n    name: c\n", "d.yaml", Schema)).toThrow(
      /^d\.yaml:5:5: items\.1\.name: duplicate key "name" \(Map keys must be unique\)$/,
    );
    expect(() =>
      parseYaml("items:\n  - { name: a, name: b }\n", "d.yaml", Schema, {
        duplicateKey: (map, key) => `${map.join("/")} has "${key}" twice`,
      }),
    ).toThrow(/^d\.yaml:2:16: items\.0\.name: items\/0 has "name" twice \(Map keys must be unique\)$/);
  });

  it("is what the emulator's fixtures loader uses", () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-fixtures-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "fixtures.yaml");
    writeFileSync(
      file,
      "workspaces:\n  - name: Acme\n    slug: acme\n    apiKey: gms_test_acme\n    apps:\n      " +
        "- name: Support\n        data:\n          - { action: Nope, input: hi, output: ho }\n",
    );
    expect(() => readFixturesFile(file)).toThrow(
      `${file}:8:23: workspaces[0].apps[0].data[0].action: unknown Action "Nope" of App "Support" (its Actions: none)`,
    );
  });
});
