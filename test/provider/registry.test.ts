/**
 * The registry of kinds (src/resources/index.ts) and what must agree with it where TypeScript cannot derive it: each
 * line's name is its kind's, both forms export a class of each kind, each kind has the shim module that its
 * resources' stored state requires (`pulumi-gms/dist/shims/<kind>.js`, src/provider/shim.ts), no shim lacking a kind,
 * and the modules `npm run build` writes from the registry (scripts/kinds.mts) are committed as it writes them.
 * test/provider/eleventh-kind.test.ts adds a kind to a copy of the package.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as dynamicForm from "../../src";
import { KIND_NAMES, kinds } from "../../src/resources";
import * as nativeForm from "../../src/native";
import { kindFileName as moduleName } from "../../src/provider/tokens";

const root = join(__dirname, "..", "..");
const shims = join(root, "src", "shims");

describe("the registry of kinds", () => {
  it("names each kind by its own name, in the registry's order", () => {
    expect(KIND_NAMES).toEqual(Object.keys(kinds));
    for (const [name, kind] of Object.entries(kinds)) expect(kind.name).toBe(name);
  });

  it("has each kind's class in both forms' exports", () => {
    for (const name of KIND_NAMES) {
      expect(typeof (dynamicForm as Record<string, unknown>)[name], `gms.${name}`).toBe("function");
      expect(typeof (nativeForm as Record<string, unknown>)[name], `gms.native.${name}`).toBe("function");
    }
  });

  it("has a shim for each kind and each name it had, and no shim without a kind", () => {
    const files = readdirSync(shims).filter((file) => file.endsWith(".ts"));
    const names = Object.values(kinds).flatMap((kind): string[] => [kind.name, ...(kind.formerNames ?? [])]);
    expect(files.sort()).toEqual(names.map((name) => `${moduleName(name)}.ts`).sort());
    for (const name of KIND_NAMES) expect(readFileSync(join(shims, `${moduleName(name)}.ts`), "utf8")).toContain(`shim("${name}")`);
  });

  it("has the modules written from it committed as the build writes them", () => {
    const check = spawnSync(process.execPath, [join(root, "scripts", "kinds.mts"), "--check"], { encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });
});
