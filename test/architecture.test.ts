/**
 * The import graph of src/: no module reaches itself through its imports (type-only imports count: they
 * tie the modules together just the same), and the offline engine (src/testing) never reaches the
 * resource kinds, so it stays usable for any dynamic resource. The graph is read with a regular
 * expression over the relative `import`/`export ... from` specifiers, resolved to files.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const src = join(__dirname, "..", "src");

/**
 * Cycles that live in code outside this test's reach while it is being reworked, each by its modules
 * (sorted). An entry that no longer matches a cycle fails the test too, so that it is removed.
 */
const KNOWN_CYCLES: string[][] = [];

const SPECIFIERS = [
  /^\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']*)["']/gm,
  /^\s*import\s*["'](\.{1,2}\/[^"']*)["']/gm,
  /\bimport\(\s*["'](\.{1,2}\/[^"']*)["']\s*\)/g,
];

/** Module (path relative to src/, `/`-separated) to the modules it imports. */
function importGraph(): Map<string, string[]> {
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((file) => file.endsWith(".ts")).map((file) => join(src, file));
  const name = (file: string) => relative(src, file).split("\\").join("/");
  const graph = new Map<string, string[]>();
  for (const file of files) {
    // Block comments that open a line hold prose such as "import, aliases, ..." that is no import.
    const text = readFileSync(file, "utf8").replace(/^\s*\/\*[\s\S]*?\*\//gm, "");
    const targets = new Set<string>();
    for (const pattern of SPECIFIERS) {
      for (const [, specifier] of text.matchAll(pattern)) {
        const base = resolve(dirname(file), specifier!.replace(/\.js$/, ""));
        const target = [`${base}.ts`, join(base, "index.ts")].find((candidate) => existsSync(candidate));
        if (target) targets.add(name(target));
        else if (!/\.json$/.test(specifier!)) throw new Error(`${name(file)}: cannot resolve ${specifier}`);
      }
    }
    graph.set(name(file), [...targets].sort());
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one module (or a module importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (module: string) => {
    index.set(module, index.size);
    low.set(module, index.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const target of graph.get(module) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(module, Math.min(low.get(module)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(module, Math.min(low.get(module)!, index.get(target)!));
    }
    if (low.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1 || graph.get(module)?.includes(module)) found.push(component.sort());
  };
  for (const module of [...graph.keys()].sort()) if (!index.has(module)) visit(module);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One loop through a component, for the message: `a.ts -> b.ts -> a.ts` (breadth first, so a shortest one). */
function loop(graph: Map<string, string[]>, component: string[]): string {
  const [start] = component as [string];
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const module = queue.shift()!;
    for (const target of graph.get(module) ?? []) {
      if (!component.includes(target)) continue;
      if (target === start) {
        const path = [module];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return [...path, start].join(" -> ");
      }
      if (!previous.has(target)) {
        previous.set(target, module);
        queue.push(target);
      }
    }
  }
  return component.join(", ");
}

/** Everything `module` imports, directly or not. */
function reachable(graph: Map<string, string[]>, module: string): Set<string> {
  const seen = new Set<string>();
  const pending = [module];
  while (pending.length > 0) {
    for (const target of graph.get(pending.pop()!) ?? []) {
      if (!seen.has(target)) {
        seen.add(target);
        pending.push(target);
      }
    }
  }
  return seen;
}

describe("the import graph of src/", () => {
  const graph = importGraph();
  const key = (component: string[]) => component.join(" ");

  it("is read from every module (the reader is not blind)", () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get("testing/engine.ts")).toContain("testing/state.ts");
    expect(graph.get("emulator/store/modules.ts")).toContain("emulator/store/apps.ts");
    // `import type` counts, and an import written over several lines is read whole.
    expect(graph.get("testing/errors.ts")).toContain("testing/results.ts");
    expect(graph.get("emulator/store/evals.ts")).toContain("emulator/store/records.ts");
    expect(
      cycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", ["c.ts"]],
          ["c.ts", ["a.ts"]],
          ["d.ts", ["a.ts"]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  it("has no import cycle other than the known ones", () => {
    const found = cycles(graph);
    const described = found.map((component) => loop(graph, component));
    if (described.length > 0) console.info(`import cycles in src/:\n  ${described.join("\n  ")}`);
    const known = new Set(KNOWN_CYCLES.map(key));
    const unexpected = found.filter((component) => !known.has(key(component))).map((component) => loop(graph, component));
    expect(unexpected, "new import cycles").toEqual([]);
    const stale = KNOWN_CYCLES.filter((component) => !found.some((cycle) => key(cycle) === key(component)));
    expect(stale, "KNOWN_CYCLES entries that no longer match a cycle: remove them").toEqual([]);
  });

  it("keeps the offline engine (testing/) from reaching the resource kinds", () => {
    const offending = [...graph.keys()]
      .filter((module) => module.startsWith("testing/"))
      .flatMap((module) =>
        [...reachable(graph, module)].filter((target) => /^(resources|shims)\//.test(target)).map((target) => `${module} -> ${target}`),
      );
    expect(offending).toEqual([]);
  });

  it("gives distinct classes distinct names (an `instanceof` on the wrong one of two would never match)", () => {
    const where = new Map<string, string[]>();
    for (const module of graph.keys()) {
      for (const [, name] of readFileSync(join(src, module), "utf8").matchAll(/^export (?:abstract )?class (\w+)/gm)) {
        where.set(name!, [...(where.get(name!) ?? []), module]);
      }
    }
    expect(where.get("RecordNotFoundError")).toEqual(["emulator/store/errors.ts"]);
    expect([...where].filter(([, modules]) => modules.length > 1)).toEqual([]);
  });

  // Layers: a command's run (recover/, discover/, ...) sits below the command-line tool (cli/) that parses its flags
  // and maps its outcome to an exit code; the schema generator (schema/, which the plugin and the migrations load)
  // below the docs that add the example programs to it. Only an executable's entry may import from above.
  const ENTRY_POINTS = new Set(["emulator/cli.ts", "schema/cli.ts", "docs/cli.ts"]);
  const reachingAbove = (layer: string, above: string) =>
    [...graph.keys()]
      .filter((module) => module.startsWith(layer) && !ENTRY_POINTS.has(module))
      .flatMap((module) =>
        [...reachable(graph, module)].filter((target) => target.startsWith(above)).map((target) => `${module} -> ${target}`),
      );

  it("keeps every module but the executables' entries from reaching the command-line tool (cli/)", () => {
    expect(reachingAbove("", "cli/").filter((edge) => !edge.startsWith("cli/"))).toEqual([]);
    // The reader sees the entry's import, which is why it is named as one.
    expect(graph.get("emulator/cli.ts")).toContain("cli/main.ts");
  });

  it("keeps the schema generator (schema/) from reaching the docs (docs/), which build on it", () => {
    expect(reachingAbove("schema/", "docs/")).toEqual([]);
    expect(graph.get("docs/schema-file.ts")).toContain("schema/package-schema.ts");
  });

  it("keeps the kinds (resources/) and what they are written with (provider/) from reaching the Workspace component (workspace/)", () => {
    expect([...reachingAbove("resources/", "workspace/"), ...reachingAbove("provider/", "workspace/")]).toEqual([]);
    // A kind's workspace form is written in provider/'s vocabulary, from which the component derives the document.
    expect(graph.get("resources/model.ts")).toContain("provider/workspace-form.ts");
    expect(graph.get("workspace/spec.ts")).toContain("provider/workspace-form.ts");
  });

  it("keeps the emulator's store from reaching its HTTP routes", () => {
    const offending = [...graph.keys()]
      .filter((module) => module.startsWith("emulator/store/"))
      .flatMap((module) =>
        [...reachable(graph, module)].filter((target) => target.startsWith("emulator/routes/")).map((target) => `${module} -> ${target}`),
      );
    expect(offending).toEqual([]);
  });
});

/**
 * The names a module exports: declarations (`export type X`, `export const X`, `export class X`, ...) and
 * export lists (`export { X, Y as Z }`, with or without `from`).
 */
function exportedNames(text: string): string[] {
  const declared = [
    ...text.matchAll(/^export (?:declare )?(?:abstract )?(?:async )?(?:type|interface|const|let|class|function|enum) (\w+)/gm),
  ];
  const listed = [...text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap(([, list]) =>
    list!.split(",").map((entry) =>
      entry
        .trim()
        .split(/\s+as\s+/)
        .at(-1)!
        .replace(/^type\s+/, ""),
    ),
  );
  return [...declared.map(([, name]) => name!), ...listed].filter(Boolean);
}

describe("the names src/api and the emulator export", () => {
  const modules = (dir: string) =>
    (readdirSync(join(src, dir), { recursive: true }) as string[]).filter((file) => file.endsWith(".ts")).map((file) => join(dir, file));
  const names = (dir: string) => {
    const where = new Map<string, string[]>();
    for (const module of modules(dir)) {
      for (const name of exportedNames(readFileSync(join(src, module), "utf8"))) where.set(name, [...(where.get(name) ?? []), module]);
    }
    return where;
  };

  it("are read from every module (the reader is not blind)", () => {
    expect(exportedNames("export type A = 1;\nexport interface B {}\nexport const C = 1;\nexport { D, E as F } from './x';")).toEqual([
      "A",
      "B",
      "C",
      "D",
      "F",
    ]);
    expect(names("api").get("AppRecord")).toEqual(["api/apps.ts"]);
    expect(names("emulator").get("StoredApp")).toEqual(["emulator/store/apps.ts"]);
  });

  // A store's record is not the api's (it carries internal ids, deleted_at, hidden columns): one name for both
  // would let one pass for the other where the shapes happen to fit. A shape the two share is the api's, imported.
  it("share none: the emulator names its stored records apart and imports the api's types", () => {
    const api = names("api");
    const shared = [...names("emulator")]
      .filter(([name]) => api.has(name))
      .map(([name, where]) => `${name}: ${[...api.get(name)!, ...where].join(", ")}`);
    expect(shared).toEqual([]);
  });
});
