/**
 * Every example program of examples/programs runs as typed, on the real CLI with the YAML language host and the
 * plugin: each `<name>/Pulumi.yaml` (with any file beside it) is copied unchanged into a project of its own, against
 * an emulator of its own seeded with examples/programs/fixtures.json. `up` makes the example's objects, each then
 * found through the service's API and nothing else made; `preview --expect-no-changes` finds nothing to do;
 * `destroy` leaves the workspace as the fixtures made it. The secrets (the workspace's API key and every config
 * value the example declares `secret: true`) never show in the CLI's output, and `pulumi stack export` holds them as
 * ciphertext. The CLI and the host are required under CI=true; without them the suite says why it skips.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import {
  checkExampleLifecycle,
  copyExampleFiles,
  EXAMPLES,
  exampleProject,
  ROUTES,
  stackConfig,
  startExampleEmulator,
} from "./programs-harness";

const cli = yamlCliFor("examples/programs.test.ts");
const TIMEOUT = 240_000;

describe.skipIf(!cli)(`every example program of examples/programs on the real CLI: ${cliName(cli)}`, () => {
  it("finds the examples, one project per folder named as the folder", () => {
    expect(EXAMPLES.length).toBeGreaterThan(0);
    for (const name of EXAMPLES) expect(parse(exampleProject(name).projectYaml).name, name).toBe(name);
  });

  it("shows every kind in at least one example", () => {
    const shown = new Set(
      EXAMPLES.flatMap((name) =>
        Object.values((parse(exampleProject(name).projectYaml).resources ?? {}) as { type: string }[]).map((resource) => resource.type),
      ),
    );
    expect([...shown].sort()).toEqual(expect.arrayContaining(Object.keys(ROUTES).map((kind) => `gms:index:${kind}`)));
  });

  it.concurrent.each(EXAMPLES)(
    "%s: up makes its objects, a preview finds no change, destroy leaves only the fixtures; no secret shows",
    async (name) => {
      const example = exampleProject(name);
      const { emulator, api } = await startExampleEmulator();
      const project = startCliProject(cli!, `gms-example-${name}`, example.projectYaml);
      try {
        copyExampleFiles(example, project.dir);
        await project.initStack(
          "dev",
          Object.fromEntries(
            Object.entries(stackConfig(example, emulator.url)).map(([key, { value, secret }]) => [key, secret ? { secret: value } : value]),
          ),
        );
        await checkExampleLifecycle(
          api,
          {
            up: () => project.pulumi("up", "--yes"),
            previewNoChanges: () => project.pulumi("preview", "--expect-no-changes", "--diff"),
            destroy: () => project.pulumi("destroy", "--yes"),
            exportState: () => project.pulumi("stack", "export"),
          },
          example.secrets,
        );
      } finally {
        project.close();
        await emulator.close();
      }
    },
    TIMEOUT,
  );
});
