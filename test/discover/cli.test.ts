/**
 * Adopting a whole workspace on the real CLI, as the summary of `pulumi-gms discover` says to: a workspace seeded
 * through the API with several objects of every kind (twins of one name among them), then discover in a YAML
 * project, its `pulumi import --file` command, the keys set with its `pulumi config set --secret` lines, and
 * `preview --expect-no-changes` of the code the import wrote, as written and with the lines that read the keys
 * added. Discover run again with `--stack` finds nothing left to import; `destroy` then leaves nothing in the
 * service but the configured Skills discover left out (counted through the API). No output, file or stack export
 * shows a key. The project is Pulumi YAML (the language host `npm run pulumi:install` builds); the CLI and the host
 * are required under CI=true.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import type { Discovery } from "../../src/discover/plan";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { KIND_NAMES } from "../../src/resources";
import { cliEnvironment } from "../../src/testing";
import { type CliProject, startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import { ACME_KEY, type FixtureLookups, fixtureLookups, KINDS_FIXTURES } from "../pulumi-cli/kinds-fixtures";
import { runDiscover } from "./run";
import { type Seeded, seedWorkspace } from "./seed";

const cli = yamlCliFor("discover/cli.test.ts");
const TIMEOUT = 300_000;
const PREFIX = "gms-discover-cli";
const PROJECT = "name: adopted\nruntime: yaml\n";

type Result = Discovery & { file: string };
type Program = { resources: Record<string, { type: string; properties: Record<string, unknown> }> };

describe.skipIf(!cli)(`adopting a workspace with discover and pulumi import, on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let fixtures: FixtureLookups;
  let seeded: Seeded;
  let project: CliProject;
  /** What discover's `pulumi stack export` runs with: the project's CLI, backend and home, as startCliProject sets them. */
  let env: NodeJS.ProcessEnv;
  /** Every line any command printed, and every file written. */
  const printed: string[] = [];
  const pulumi = async (...args: string[]) => {
    const output = await project.pulumi(...args).catch((error: Error) => {
      printed.push(error.message);
      throw error;
    });
    printed.push(output);
    return output;
  };
  /** A command discover printed (its comment after ` # ` left out), run in the project (its `pulumi` is the project's CLI), with `more` arguments. */
  const runPrinted = (command: string, ...more: string[]) => {
    const [program, ...args] = command.split("   # ")[0]!.split(" ");
    expect(program).toBe("pulumi");
    return pulumi(...args, ...more);
  };
  const discover = async (...argv: string[]): Promise<Result> => {
    const run = await runDiscover(["--json", ...argv], { env, cwd: project.dir });
    printed.push(run.out, run.err);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    return JSON.parse(run.out) as Result;
  };

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 0 });
    fixtures = await fixtureLookups(emulator);
    seeded = await seedWorkspace(fixtures);
    project = startCliProject(cli!, PREFIX, PROJECT);
    const sandbox = { backendDir: join(project.root, "state"), passphrase: `${PREFIX}-passphrase`, pulumiHome: join(project.root, "home") };
    env = { ...cliEnvironment(cli!, sandbox), GMS_BASE_URL: emulator.url, GMS_API_KEY: ACME_KEY };
    await project.initStack("dev", { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: ACME_KEY } });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    project?.close();
  });

  it(
    "imports every object discover lists, previews with no change with and without the key lines, and destroy leaves nothing",
    async () => {
      const result = await discover();
      const resources = result.document.resources;
      const toImport = KIND_NAMES.flatMap((kind) => seeded.guids[kind]).length - seeded.configuredSkills.length;
      expect(resources).toHaveLength(toImport);
      expect(result.leftOut.map((entry) => entry.code)).toEqual(["configured-skill", "configured-skill"]);
      expect(result.language).toEqual({ runtime: "yaml" });
      const fileText = readFileSync(join(project.dir, result.file), "utf8");
      printed.push(fileText);

      // The import, as discover says to run it (unprotected, so that destroy may delete what it imported).
      const [importCommand, ...rest] = result.next;
      expect(importCommand).toBe("pulumi import --file gms-import.json --out imported.yaml");
      expect(await runPrinted(importCommand!, "--yes", "--protect=false")).toContain(`${toImport} imported`);
      const code = readFileSync(join(project.dir, "imported.yaml"), "utf8");
      printed.push(code);
      const generated = parse(code) as Program;
      expect(Object.keys(generated.resources).sort()).toEqual(resources.map((entry) => entry.name).sort());
      // The connection types the workspace shows are in the code; no key is.
      for (const entry of resources.filter((resource) => resource.inputs))
        expect(generated.resources[entry.name]!.properties).toMatchObject(entry.inputs!);

      // The keys, set as discover says (the CLI would ask for each value; here it is given).
      const idOf = new Map(resources.map((entry) => [entry.name, entry.id]));
      // Each says whose key it is and where its value comes from.
      expect(rest.slice(0, -1)).toEqual(result.configKeys.map((key) => `${key.setCommand}   # ${key.about}`));
      expect(result.configKeys).toHaveLength(seeded.keys.size);
      for (const key of result.configKeys) await runPrinted(key.setCommand, seeded.keys.get(idOf.get(key.resource)!)!);

      // The code as `pulumi import` wrote it is the program: nothing to change.
      const unchanged = new RegExp(`${toImport + 1} unchanged`);
      project.write(PROJECT + code);
      expect(await runPrinted(rest.at(-1)!, "--diff")).toMatch(unchanged);
      // With each key read from config, the line discover printed in its place: nothing to change either.
      for (const key of result.configKeys) {
        expect(key.where).toBe(`under resources.${key.resource}.properties`);
        generated.resources[key.resource]!.properties[key.property] = parse(key.programLine)[key.property];
      }
      const withKeys = PROJECT + stringify(generated);
      for (const key of result.configKeys) expect(withKeys).toContain(`${key.property}: \${${key.configKey}}`);
      project.write(withKeys);
      expect(await pulumi("preview", "--expect-no-changes", "--diff")).toMatch(unchanged);

      // The stack now manages all of it: discover has nothing left to import into it.
      const again = await discover("--stack", "dev");
      expect(again.document.resources).toEqual([]);
      expect(
        again.leftOut
          .filter((entry) => entry.code === "managed")
          .map((entry) => entry.guid)
          .sort(),
      ).toEqual(resources.map((entry) => entry.id).sort());

      const exported = await pulumi("stack", "export");
      expect(exported).toContain("ciphertext");

      await pulumi("destroy", "--yes", "--skip-preview");
      const { api } = fixtures;
      const { contexts } = fixtures.guids;
      expect((await api("GET", "/apps")).body.total_count).toBe(0);
      expect((await api("GET", "/providers")).body).toEqual([]);
      expect((await api("GET", "/models")).body).toEqual([]);
      for (const guid of seeded.guids.Workflow) expect((await api("GET", `/workflows/${guid}`)).status).toBe(404);
      for (const path of ["/datasets/", "/evals", "/experiments", "/finetune"])
        expect((await api("GET", path)).body.total_count, path).toBe(0);
      for (const context of Object.values(contexts)) expect((await api("GET", `/contexts/${context}/context_sources`)).body).toEqual([]);
      const skills = (await api("GET", "/skills")).body.data as { guid: string }[];
      expect(skills.map((skill) => skill.guid).sort()).toEqual([...seeded.configuredSkills].sort());

      for (const text of printed) for (const secret of [ACME_KEY, ...seeded.keys.values()]) expect(text).not.toContain(secret);
    },
    TIMEOUT,
  );
});
