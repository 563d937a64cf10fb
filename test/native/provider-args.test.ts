/**
 * The native Provider's inputs (ProviderArgs in src/native/provider.ts) are the package's settings, one member each,
 * and each member's doc comment is the setting's description in schema.json (settingDescription of src/settings.ts),
 * which the other languages' SDKs carry: a description changed in one place and not the other fails here. (The
 * members' types come from the settings themselves, SettingValue.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { SETTING_NAMES, settingDescription } from "../../src/settings";

const FILE = join(__dirname, "..", "..", "src", "native", "provider.ts");

/** Each member of ProviderArgs with its doc comment, as one line (the comment's own line breaks folded). */
function providerArgsDocs(): Record<string, string> {
  const source = ts.createSourceFile(FILE, readFileSync(FILE, "utf8"), ts.ScriptTarget.Latest, true);
  const args = source.statements.find(
    (statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === "ProviderArgs",
  );
  if (!args) throw new Error(`${FILE} declares no ProviderArgs`);
  return Object.fromEntries(
    args.members.map((member) => {
      const docs = ts.getJSDocCommentsAndTags(member).filter(ts.isJSDoc);
      const text = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? "").join(" ");
      return [(member.name as ts.Identifier).text, text.replace(/\s+/g, " ").trim()];
    }),
  );
}

describe("ProviderArgs", () => {
  it("has one member per setting, each documented by the setting's schema.json description", () => {
    const docs = providerArgsDocs();
    expect(Object.keys(docs)).toEqual(SETTING_NAMES);
    for (const name of SETTING_NAMES) expect(docs[name], name).toBe(settingDescription(name));
  });
});
