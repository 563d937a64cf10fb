/**
 * What the upgrade suites share: every stack of every recorded release (test/upgrade/<version>/, made by `npm run
 * upgrade:record`; its shape: scripts/upgrade/corpus.mts) restored for the code under test, and the check each one
 * passes (`checkUpgrade`).
 *
 * Restoring a stack is what a user's upgrade leaves: the same service holding the same objects, the same state, the
 * same program and settings, and this checkout's code in place of the release's. The emulator under test opens a copy
 * of the recorded database; the stack is created on a fresh file backend from the recorded settings file (its
 * passphrase salt) and `pulumi stack import` of the recorded export. The emulator listens on another port than the
 * recording's, which is the one thing that differs: the recorded URL is replaced by the new one in the settings file
 * and the export (the provider's `baseUrl`), as the same service at the same address would be. The plugin the engine
 * starts is `dist/plugin/main.js`, on PATH as `pulumi-resource-gms` (the release's is never installed); a Node.js
 * program gets this checkout's package installed as a copy, so that the `require("pulumi-gms/dist/shims/<kind>.js")`
 * each dynamic resource's state holds resolves to the code under test.
 */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join, relative } from "node:path";
import { expect, it } from "vitest";
import {
  DATABASE_FILE,
  EXPORT_FILE,
  PROGRAM_DIR,
  type ProgramChange,
  type RecordedStack,
  applyEdits,
  readCorpus,
  recordedVersions,
  settingsFile,
} from "../../scripts/upgrade/corpus.mts";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { kindOfDynamicToken, nameOfNativeToken } from "../../src/provider/tokens";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { type CliResult, installPackageCopy, PulumiCliEngine, type PulumiCli } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { type Api, ROUTES, workspaceObjects } from "../examples/programs-harness";
import { type CliProject, startCliProject } from "../plugin/cli-project";

/** A recorded stack and where it lives. */
export interface CorpusStack {
  /** `<version>/<stack>`, as the suites name it. */
  label: string;
  version: string;
  dir: string;
  recorded: RecordedStack;
}

/** Every recorded release's stacks, oldest release first. */
export const CORPUS_STACKS: CorpusStack[] = recordedVersions().flatMap((version) =>
  readCorpus(version).stackDirs.map(({ dir, stack }) => ({ label: `${version}/${stack.name}`, version, dir, recorded: stack })),
);

/** A step of an operation: what the engine did to one resource of the program, and the inputs that made it. */
export interface Step {
  op: string;
  name: string;
  changes: string[];
}

/** A resource of a stack export. */
interface ExportedResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, any>;
  outputs?: Record<string, any>;
}
type StackExport = { deployment: { resources?: ExportedResource[] } };

/** The kind of a resource of the package, by its native or dynamic type token; undefined for anything else. */
const kindOf = (type: string): string | undefined => nameOfNativeToken(type) ?? kindOfDynamicToken(type);

/** The package's resources in an export, as kind, name, GUID and the inputs that locate them. */
export const objectsOf = (exported: StackExport) =>
  (exported.deployment.resources ?? []).flatMap((resource) => {
    const kind = kindOf(resource.type);
    return kind ? [{ kind, name: resource.urn.slice(resource.urn.lastIndexOf("::") + 2), guid: resource.id!, resource }] : [];
  });

export interface RestoredStack {
  stack: CorpusStack;
  project: CliProject;
  emulator: RunningEmulator;
  api: Api;
  /** A preview (or a refresh) that fails on any change, the providers' included: `--expect-no-changes`. */
  previewNoChanges(): Promise<Step[]>;
  refreshNoChanges(): Promise<Step[]>;
  up(): Promise<Step[]>;
  destroy(): Promise<Step[]>;
  exportState(): Promise<StackExport>;
  /** Applies a recorded change to the program. */
  change(change: ProgramChange): void;
  /** Everything the CLI printed so far. */
  printed: string[];
  close(): Promise<void>;
}

const stepsOfResult = (result: CliResult): Step[] => result.steps.map(({ op, name, changes }) => ({ op, name, changes }));

/**
 * The program's steps in the engine's events (`--json`): for each resource of the package its last step, as it
 * finished when it did (a refresh's `refresh` step finishes as `same` when nothing drifted), a replacement's three
 * steps as one `replace`, and the properties the provider's diff named.
 */
function stepsOfEvents(events: EngineEvent[]): Step[] {
  const steps = new Map<string, Step>();
  for (const event of events) {
    const metadata = event.resourcePreEvent?.metadata ?? event.resOutputsEvent?.metadata;
    if (!metadata || kindOf(metadata.type) === undefined) continue;
    const replacing =
      ["replace", "create-replacement", "delete-replaced"].includes(metadata.op) || steps.get(metadata.urn)?.op === "replace";
    const changes = [...new Set([...(steps.get(metadata.urn)?.changes ?? []), ...(metadata.diffs ?? []), ...(metadata.keys ?? [])])].sort();
    steps.set(metadata.urn, {
      op: replacing ? "replace" : metadata.op,
      name: metadata.urn.slice(metadata.urn.lastIndexOf("::") + 2),
      changes,
    });
  }
  return [...steps.values()];
}

/** The recorded stack, restored for the code under test (see the top of this file). */
export async function restoreStack(cli: PulumiCli, stack: CorpusStack): Promise<RestoredStack> {
  const { recorded, dir } = stack;
  const program = join(dir, PROGRAM_DIR);
  const project = startCliProject(cli, `gms-upgrade-${recorded.name}`, readFileSync(join(program, "Pulumi.yaml"), "utf8"), {
    PULUMI_CONFIG_PASSPHRASE: recorded.passphrase,
    PULUMI_ENABLE_STREAMING_JSON_PREVIEW: "true",
  });
  let emulator: RunningEmulator | undefined;
  try {
    cpSync(join(dir, DATABASE_FILE), join(project.root, DATABASE_FILE));
    emulator = await startEmulator({ port: 0, db: join(project.root, DATABASE_FILE), apiKey: recorded.apiKey, ...recorded.emulator });
    const url = emulator.url;
    const atThisAddress = (text: string) => text.replaceAll(recorded.baseUrl, url);
    cpSync(program, project.dir, { recursive: true });
    const settings = join(project.dir, settingsFile(recorded.stack));
    writeFileSync(settings, atThisAddress(readFileSync(settings, "utf8")));
    const exported = join(project.root, EXPORT_FILE);
    writeFileSync(exported, atThisAddress(readFileSync(join(dir, EXPORT_FILE), "utf8")));
    await project.pulumi("stack", "init", recorded.stack);
    await project.pulumi("stack", "import", "--file", exported);
    const printed: string[] = [];
    const common = {
      stack,
      project,
      emulator,
      api: ((method, path) => callOverHttp({ url, apiKey: recorded.apiKey }, method, path)) as Api,
      printed,
      change: (change: ProgramChange) => applyEdits(project.dir, change.edits),
      // The checkpoint as the file backend keeps it (what `pulumi stack export` prints, without starting the CLI).
      async exportState() {
        const checkpoint = join(project.root, "state", ".pulumi", "stacks", recorded.project, `${recorded.stack}.json`);
        const { latest } = (JSON.parse(readFileSync(checkpoint, "utf8")) as { checkpoint: { latest: StackExport["deployment"] } })
          .checkpoint;
        return { deployment: latest };
      },
      async close() {
        await emulator?.close();
        project.close();
      },
    };
    if (recorded.form === "yaml") {
      // The engine's events, one JSON document a line (a preview's too, with PULUMI_ENABLE_STREAMING_JSON_PREVIEW), read
      // into steps as the Automation API's are.
      const operation = async (...args: string[]) => {
        const { stdout, printed: text } = await project.pulumiStdout(...args, "--json");
        printed.push(text);
        return stepsOfEvents(
          stdout
            .split("\n")
            .filter((line) => line.startsWith("{"))
            .map((line) => JSON.parse(line) as EngineEvent),
        );
      };
      return {
        ...common,
        previewNoChanges: () => operation("preview", "--expect-no-changes"),
        refreshNoChanges: () => operation("refresh", "--yes", "--skip-preview", "--expect-no-changes"),
        up: () => operation("up", "--yes", "--skip-preview"),
        destroy: () => operation("destroy", "--yes", "--skip-preview"),
      };
    }
    installPackageCopy(project.dir);
    const engine = new PulumiCliEngine({
      cli,
      stateDir: join(project.root, "state"),
      pulumiHome: join(project.root, "home"),
      programDir: project.dir,
      program: recorded.entry!,
      project: recorded.project,
      stack: recorded.stack,
      config: {
        "gms:baseUrl": url,
        "gms:apiKey": { secret: recorded.apiKey },
        ...Object.fromEntries(Object.entries(recorded.secrets).map(([key, value]) => [key, { secret: value }])),
      },
      secretsPassphrase: recorded.passphrase,
      env: { PATH: [join(project.root, "bin"), process.env.PATH ?? ""].join(delimiter) },
      log: (line) => printed.push(line),
    });
    return {
      ...common,
      previewNoChanges: async () => stepsOfResult(await engine.preview({ expectNoChanges: true })),
      refreshNoChanges: async () => stepsOfResult(await engine.refresh({ expectNoChanges: true })),
      up: async () => stepsOfResult(await engine.up()),
      destroy: async () => stepsOfResult(await engine.destroy()),
    };
  } catch (error) {
    await emulator?.close();
    project.close();
    throw error;
  }
}

/** The steps that did something, as `op name`. */
const changed = (steps: Step[]) => steps.filter((step) => step.op !== "same").map(({ op, name }) => `${op} ${name}`);

/** Where an object of the package is read through the API. */
const routeOf = (object: ReturnType<typeof objectsOf>[number]) => ROUTES[object.kind]!(object.guid, object.resource.inputs ?? {});

/** A value inside an object, by path. */
const at = (value: any, path: readonly string[]) => path.reduce((inner, key) => inner?.[key], value);

/**
 * The dynamic resources' serialized providers: each is one `require` of a shim module path that the code under test's
 * copy in the program serves, so refresh, update and delete of the stored resources run this checkout's code.
 */
function expectShimsOfTheCodeUnderTest(restored: RestoredStack, exported: StackExport): void {
  const fromProgram = createRequire(join(restored.project.dir, "package.json"));
  const installed = join(restored.project.dir, "node_modules", "pulumi-gms");
  for (const { kind, name, resource } of objectsOf(exported)) {
    const file = kind.replace(/(?<=[a-z])(?=[A-Z])/g, "-").toLowerCase();
    for (const text of [resource.inputs?.__provider, resource.outputs?.__provider]) {
      expect(String(text).match(/require\("[^"]*"\)/g), name).toEqual([`require("pulumi-gms/dist/shims/${file}.js")`]);
    }
    expect(relative(installed, fromProgram.resolve(`pulumi-gms/dist/shims/${file}.js`)), name).toBe(join("dist", "shims", `${file}.js`));
  }
}

/**
 * The upgrade of one recorded stack to the code under test: every stored object is live; a preview and a refresh find
 * no change; (dynamic resources) a resource taken out of the program is deleted by the provider the state names; the
 * recorded one-field edit is an update in place of that resource alone, whose outputs then hold the new value;
 * destroy deletes every object of the stack and leaves the rest of the workspace (the fixtures, and what the service
 * keeps) as it was. No secret shows in anything the CLI printed or in the state.
 */
export async function checkUpgrade(restored: RestoredStack): Promise<void> {
  const { recorded } = restored.stack;
  const { api } = restored;
  const imported = await restored.exportState();
  const objects = objectsOf(imported);
  expect(objects.length, "the stack's objects").toBeGreaterThan(0);
  for (const object of objects) expect((await api("GET", routeOf(object))).status, `${object.kind} ${object.name}`).toBe(200);
  if (recorded.form === "dynamic") expectShimsOfTheCodeUnderTest(restored, imported);
  const workspace = await workspaceObjects(api);

  expect(changed(await restored.previewNoChanges()), "preview --expect-no-changes").toEqual([]);
  expect(changed(await restored.refreshNoChanges()), "refresh --expect-no-changes").toEqual([]);

  if (recorded.remove) {
    restored.change(recorded.remove);
    expect(changed(await restored.up()), "up without a resource").toEqual([`delete ${recorded.remove.resource}`]);
    const removed = objects.find((object) => object.name === recorded.remove!.resource)!;
    expect((await api("GET", routeOf(removed))).status, `${removed.kind} ${removed.name} after its removal`).toBe(404);
  }

  const { edit } = recorded;
  restored.change(edit);
  const steps = await restored.up();
  expect(changed(steps), "up with one field edited").toEqual([`update ${edit.resource}`]);
  expect(steps.find((step) => step.name === edit.resource)!.changes, "what the update changes").toContain(edit.property);
  const edited = objectsOf(await restored.exportState()).find((object) => object.name === edit.resource)!;
  expect(edited.guid, "the same object, updated in place").toBe(objects.find((object) => object.name === edit.resource)!.guid);
  expect(at(edited.resource.outputs, edit.path), `${edit.resource}.${edit.path.join(".")} as the service now has it`).toEqual(edit.value);

  const final = await restored.exportState();
  await restored.destroy();
  for (const object of objects) expect((await api("GET", routeOf(object))).status, `${object.kind} ${object.name} after destroy`).toBe(404);
  const made = new Set(objects.map((object) => `${object.kind} ${object.guid}`));
  expect(await workspaceObjects(api), "the workspace but the stack's objects").toEqual(workspace.filter((object) => !made.has(object)));

  const secrets = [recorded.apiKey, ...Object.values(recorded.secrets)];
  for (const [label, text] of Object.entries({ printed: restored.printed.join("\n"), state: JSON.stringify(final) }))
    for (const secret of secrets) expect(text.includes(secret), `${label} shows a secret`).toBe(false);
}

// Seven or eight CLI runs a stack, several stacks at once: on a loaded 2-core machine each run may take a minute.
const TIMEOUT = 900_000;

/** A test per stack, several at once: the stack restored for the code under test, `checkUpgrade`, and closed. */
export function itUpgradesEach(cli: PulumiCli, stacks: CorpusStack[], what: string): void {
  it.concurrent.each(stacks.map((stack) => [stack.label, stack] as const))(
    `%s: ${what}`,
    async (_label, stack) => {
      const restored = await restoreStack(cli, stack);
      try {
        await checkUpgrade(restored);
      } finally {
        await restored.close();
      }
    },
    TIMEOUT,
  );
}
