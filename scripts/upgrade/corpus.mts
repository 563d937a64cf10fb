/**
 * The upgrade corpus: what a release left behind, recorded once by `npm run upgrade:record` (scripts/upgrade-record.mts)
 * into `test/upgrade/<version>/` and read by the upgrade suites (test/upgrade/*.test.ts). One place defines its shape:
 *
 *   test/upgrade/<version>/
 *     corpus.json          the release, the CLI and Node.js it was recorded with, and the stacks (Corpus)
 *     schema.json          the release's package schema, which `npm run schema:compare` compares schema.json with
 *     README.md            what the folder is, for a reader of the repository
 *     <stack>/
 *       stack.json         how to reopen the stack and what the suites change in it (RecordedStack)
 *       program/           the program as it ran, with Pulumi.<stack>.yaml (its settings and passphrase salt)
 *       export.json        `pulumi stack export` after `up`, secrets encrypted
 *       emulator.sqlite    the emulator's database holding the same objects under the same GUIDs
 *                          (`.sqlite`, since .gitignore ignores `*.db`)
 *
 * Every value in it is a test value: the passphrase and the keys are written in stack.json.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
/** Where every release's corpus is kept. */
export const CORPORA = join(ROOT, "test", "upgrade");

/** How a recorded program runs: a Pulumi YAML program on the plugin, or Node.js with the dynamic or the native classes. */
export type Form = "yaml" | "dynamic" | "native";

/** A change to a program's text: `find` occurs exactly once in `file` (relative to program/), and becomes `replace`. */
export interface TextEdit {
  file: string;
  find: string;
  replace: string;
}

/** An edit the suites make to the program and what the next `up` must then do to one resource. */
export interface ProgramChange {
  /** The resource's name in the program. */
  resource: string;
  /** Its type token, as the state names it. */
  type: string;
  edits: TextEdit[];
}

/** A change of one field that the service takes in place: the `up` after it updates `resource` and nothing else. */
export interface FieldEdit extends ProgramChange {
  /** The input that changes (a top-level property of the resource). */
  property: string;
  /** Where the new value sits in the resource's outputs after the `up`: `[property]` or deeper (`splitterConfig.chunkSize`). */
  path: string[];
  /** The value after the edit. */
  value: unknown;
}

export interface RecordedStack {
  /** The folder's name: `<form>-<program>`. */
  name: string;
  form: Form;
  project: string;
  stack: string;
  /** The program's entry, for a Node.js program (run as an Automation API inline program). */
  entry?: string;
  /** Encrypts the stack's secrets (the passphrase secrets provider; the salt is in program/Pulumi.<stack>.yaml). */
  passphrase: string;
  /** The service's URL when it was recorded: the suites' emulator stands in at another port, the same service. */
  baseUrl: string;
  /** The workspace's API key (gms:apiKey). */
  apiKey: string;
  /** The program's other secret settings, by config key. */
  secrets: Record<string, string>;
  /** What the emulator was started with beside the database. */
  emulator: { fineTuneSeconds: number };
  /** The one-field edit the suites apply before an `up` that must update in place. */
  edit: FieldEdit;
  /** Dynamic resources only: a resource the suites take out of the program, which the next `up` deletes. */
  remove?: ProgramChange;
}

export interface Corpus {
  /** The release's version. */
  version: string;
  /** `pulumi version` of the CLI that ran it. */
  pulumi: string;
  node: string;
  /** The day it was recorded (YYYY-MM-DD). */
  recorded: string;
  /** The commit of the release's checkout, when it was a git checkout. */
  commit?: string;
  stacks: string[];
}

export const STACK_FILE = "stack.json";
export const CORPUS_FILE = "corpus.json";
export const PROGRAM_DIR = "program";
export const EXPORT_FILE = "export.json";
export const DATABASE_FILE = "emulator.sqlite";
export const SCHEMA_FILE = "schema.json";

/** The stack settings file of a stack: `Pulumi.<stack>.yaml`. */
export const settingsFile = (stack: string) => `Pulumi.${stack}.yaml`;

const readJson = <T,>(file: string): T => JSON.parse(readFileSync(file, "utf8")) as T;
export const writeJson = (file: string, value: unknown) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** The versions whose corpus is recorded, oldest first. */
export function recordedVersions(): string[] {
  if (!existsSync(CORPORA)) return [];
  return readdirSync(CORPORA, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(CORPORA, entry.name, CORPUS_FILE)))
    .map((entry) => entry.name)
    .sort(compareVersions);
}

/** A recorded corpus and each of its stacks with the folder it lives in. */
export function readCorpus(version: string): Corpus & { dir: string; stackDirs: { dir: string; stack: RecordedStack }[] } {
  const dir = join(CORPORA, version);
  const corpus = readJson<Corpus>(join(dir, CORPUS_FILE));
  return {
    ...corpus,
    dir,
    stackDirs: corpus.stacks.map((name) => ({ dir: join(dir, name), stack: readJson<RecordedStack>(join(dir, name, STACK_FILE)) })),
  };
}

/** The last recorded release's schema.json, the one `npm run schema:compare` compares with, or undefined when none is recorded. */
export function lastRecordedSchema(): { version: string; file: string } | undefined {
  const version = recordedVersions().at(-1);
  return version === undefined ? undefined : { version, file: join(CORPORA, version, SCHEMA_FILE) };
}

/** Applies each edit to the program in `programDir`; throws, naming the file and the text, when a `find` does not occur exactly once. */
export function applyEdits(programDir: string, edits: readonly TextEdit[]): void {
  for (const edit of edits) {
    const file = join(programDir, edit.file);
    const text = readFileSync(file, "utf8");
    const count = text.split(edit.find).length - 1;
    if (count !== 1) throw new Error(`${edit.file}: ${JSON.stringify(edit.find)} occurs ${count} times, not once`);
    writeFileSync(
      file,
      text.replace(edit.find, () => edit.replace),
    );
  }
}

/** A semantic version as numbers ([major, minor, patch]) and its pre-release, or undefined when it is not one. */
export function parseVersion(version: string): { core: [number, number, number]; prerelease?: string } | undefined {
  const found = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(version);
  if (!found) return undefined;
  const core: [number, number, number] = [Number(found[1]), Number(found[2]), Number(found[3])];
  return found[4] === undefined ? { core } : { core, prerelease: found[4] };
}

/** Orders versions as semver does for their cores (a pre-release before its release); what is not a version sorts last, by name. */
export function compareVersions(a: string, b: string): number {
  const left = parseVersion(a);
  const right = parseVersion(b);
  if (!left || !right) return left ? -1 : right ? 1 : a.localeCompare(b);
  for (let at = 0; at < 3; at++) if (left.core[at] !== right.core[at]) return left.core[at]! - right.core[at]!;
  if (left.prerelease === right.prerelease) return 0;
  return left.prerelease === undefined ? 1 : right.prerelease === undefined ? -1 : left.prerelease.localeCompare(right.prerelease);
}
