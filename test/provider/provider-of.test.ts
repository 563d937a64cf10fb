/**
 * What the serialized shims require in the provider host (`pulumi-gms/provider`): the provider of each
 * kind, whose module is loaded only when a resource of that kind is served. Run in a child process, as the
 * host runs, so that the require cache shows what was loaded.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kinds } from "../../src/resources";

const root = join(__dirname, "..", "..");

function run(script: string): unknown {
  const result = spawnSync(process.execPath, ["-e", script], { cwd: root, encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

describe("providerOf", () => {
  it("loads only the module of the kind it serves", () => {
    const out = run(`const { providerOf } = require("./dist/provider/index.js");
const loaded = () => Object.keys(require.cache).filter((path) => path.includes("/dist/resources/")).map((path) => path.split("/").pop()).sort();
const before = loaded();
const provider = providerOf("App");
process.stdout.write(JSON.stringify({ before, after: loaded(), methods: Object.keys(provider).sort() }));`);
    expect(out).toEqual({
      before: [],
      after: ["app.js"],
      methods: ["check", "create", "delete", "diff", "read", "update"],
    });
  });

  it("serves every kind, each with its own declaration, and names an unknown one", () => {
    const names = Object.keys(kinds);
    expect(names).toHaveLength(10);
    const out = run(`const { providerOf } = require("./dist/provider/index.js");
const { kinds } = require("./dist/resources/index.js");
const { resourceProvider } = require("./dist/provider/provider.js");
const { Session } = require("./dist/provider/session.js");
(async () => {
const served = [];
for (const name of ${JSON.stringify(names)}) {
  const provider = providerOf(name);
  // The check of an empty declaration shows the kind: its required fields and defaults.
  const own = JSON.stringify(await provider.check({}, {}));
  served.push([name, own === JSON.stringify(await resourceProvider(kinds[name], new Session()).check({}, {})), providerOf(name) === provider]);
}
let unknown;
try { providerOf("Gadget"); } catch (error) { unknown = error.message; }
let inherited;
try { providerOf("toString"); } catch (error) { inherited = error.message; }
let notKind;
try { providerOf("Index"); } catch (error) { notKind = error.message; }
process.stdout.write(JSON.stringify({ served, unknown, inherited, notKind }));
})();`) as {
      served: [string, boolean, boolean][];
      unknown: string;
      inherited: string;
      notKind: string;
    };
    expect(out.served).toEqual(names.map((name) => [name, true, true]));
    expect(out.unknown).toBe("pulumi-gms has no resource kind Gadget; is the installed package older than the state?");
    expect(out.inherited).toMatch(/no resource kind toString/);
    // A module of src/resources/ that declares no kind of its name (the registry itself) is no kind.
    expect(out.notKind).toMatch(/no resource kind Index/);
  });
});
