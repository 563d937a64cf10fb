/**
 * The kind pages' TypeScript form on the dynamic resources runs as written: each example of examples/programs as
 * docs/kinds/ shows it (dynamicForm of its generated index.ts: the same program with `gms` bound to the package's
 * root), with the files it reads, in a folder of its own with the package installed, through LocalEngine (the real
 * dynamic-provider host; the lookups run in the program) against an emulator seeded with fixtures.json. `up` makes
 * dynamic resources only and gives every output the example declares, each object found through the service's API; a
 * preview finds nothing to change; `destroy` leaves the workspace as the fixtures made it (and a fine-tune's training
 * Dataset, which the service keeps). No secret shows in what the engine printed. Each also type-checks, strict, against
 * the installed package, as in a user's editor.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dynamicForm, examplePrograms } from "../../src/docs/example-programs";
import { installPackageCopy, LocalEngine } from "../../src/testing";
import { copyExampleFiles, EXAMPLES, exampleProject, stackConfig, startExampleEmulator, workspaceObjects } from "./programs-harness";
import { typeCheckStrict } from "./type-check";

const TIMEOUT = 180_000;
const work = mkdtempSync(join(tmpdir(), "gms-programs-dynamic-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("dynamicForm: an example's TypeScript on the dynamic resources", () => {
  it("binds gms to the package's root and changes nothing else", () => {
    const native = 'import * as pulumi from "@pulumi/pulumi";\nimport { native as gms } from "pulumi-gms";\n\nnew gms.App("a", {});\n';
    expect(dynamicForm(native)).toBe(
      'import * as pulumi from "@pulumi/pulumi";\nimport * as gms from "pulumi-gms";\n\nnew gms.App("a", {});\n',
    );
  });

  it("refuses a program that does not import the plugin's classes as npm run examples writes it", () => {
    expect(() => dynamicForm('import * as gms from "pulumi-gms";\n')).toThrow(/no `import \{ native as gms \} from "pulumi-gms";`/);
  });

  it("exists for every example", () => {
    expect(examplePrograms().map((program) => [program.name, program.dynamic !== undefined])).toEqual(EXAMPLES.map((name) => [name, true]));
  });

  it("type-checks, strict, against the installed package", () => {
    const dir = join(work, "type-check");
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "dynamic-examples", private: true, type: "module" }));
    installPackageCopy(dir);
    for (const program of examplePrograms()) {
      mkdirSync(join(dir, program.name));
      writeFileSync(join(dir, program.name, "index.ts"), program.dynamic!);
    }
    const { output, status } = typeCheckStrict(dir, ["*/index.ts"]);
    expect(output).toBe("");
    expect(status).toBe(0);
  }, 120_000);
});

describe.concurrent("every example on the dynamic resources, through LocalEngine", () => {
  it.for(examplePrograms())(
    "$name: up makes its objects, a preview finds no change, destroy leaves the fixtures",
    { timeout: TIMEOUT },
    async (program) => {
      const example = exampleProject(program.name);
      const { emulator, api } = await startExampleEmulator();
      const dir = mkdtempSync(join(work, `${program.name}-`));
      const printed: string[] = [];
      try {
        writeFileSync(join(dir, "package.json"), JSON.stringify({ name: program.name, private: true, type: "module" }));
        installPackageCopy(dir);
        copyExampleFiles(example, dir);
        writeFileSync(join(dir, "index.ts"), program.dynamic!);
        const config = Object.fromEntries(
          Object.entries(stackConfig(example, emulator.url)).map(([key, { value, secret }]) => [key, secret ? { secret: value } : value]),
        );
        const engine = new LocalEngine({
          programDir: dir,
          stateFile: join(dir, "state.json"),
          project: program.name,
          stack: "dev",
          config,
          secretsPassphrase: "dynamic examples",
          log: (line) => printed.push(line),
        });
        const fixtures = await workspaceObjects(api);

        const up = await engine.up();
        expect(up.counts.create, printed.join("\n")).toBeGreaterThan(0);
        expect(up.steps.every((step) => step.op === "create" && step.type.startsWith("pulumi-nodejs:dynamic/gms:"))).toBe(true);
        expect(Object.keys(up.outputs).sort()).toEqual(example.outputs);
        const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { resources: { outputs: Record<string, unknown> }[] };
        const kept = state.resources.flatMap(({ outputs }) => (outputs.trainingDataset ? [`Dataset ${outputs.trainingDataset}`] : []));
        expect((await workspaceObjects(api)).length).toBe(fixtures.length + up.counts.create + kept.length);

        const preview = await engine.preview();
        expect(preview.steps.every((step) => step.op === "same")).toBe(true);
        await engine.destroy();
        expect(await workspaceObjects(api)).toEqual([...fixtures, ...kept].sort());
        for (const secret of example.secrets) expect(printed.join("\n")).not.toContain(secret);
      } finally {
        await emulator.close();
      }
    },
  );
});
