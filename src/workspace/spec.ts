/**
 * The declarative workspace format: one document (YAML, or an object in a program) declaring any number
 * of each of the ten kinds, each kind a map from a logical name to an entry. Entries are derived from
 * the kinds' field declarations (`entryOf`: camelCase, the kinds' own schemas, descriptions and required
 * fields) except that they refer to other objects by name instead of by GUID, and that secrets are never
 * written in the document: what a kind's entry writes so is its workspace form, declared in its own file
 * (`Kind.workspace`, in the vocabulary of src/provider/workspace-form.ts).
 *
 * References:
 * - an App (`workflow.app`, `dataset.app`, `experiment.app`, `fineTune.app`, `action.app`): the logical name of an App
 *   declared under `apps`; otherwise the name of an App that already exists in the workspace (one
 *   configured outside Pulumi), looked up during preview;
 * - `model.provider`: the logical name of a ProviderConnection declared under `providerConnections`
 *   (the Model takes its provider type, key and endpoint from it and is created after it);
 * - `eval.dataset`, `fineTune.dataset`: the logical name of a Dataset declared under `datasets`;
 * - `fineTune.providerConnection`: the numeric id, or `{ model }`, the logical name of a Model declared under
 *   `models`, whose `workspaceModelProviderId` output it takes (the fine-tune is created after that Model);
 * - Actions (`eval.action` as `{app, action}`, `experiment.primaryAction` / `secondaryAction` within
 *   `experiment.app`), Contexts (`contextSource.context`), Eval types (`eval.evalTypes`) and Skill types
 *   (`skill.type`): by name, looked up during preview, as the public interface cannot create them.
 *
 * Two entries with the same identifying fields (two Apps of one `name`, two Datasets of one `name`, two Workflows of
 * one App and `name`, ...) are twins, and are declared with the warning a program in code gets for them
 * (src/provider/identity.ts): the service keeps both (no route refuses a name in use: a second App of a name gets the
 * slug `name-2`, and a Skill's create even takes the name of an existing Skill), and the document refers to its entries
 * by logical name, never by these fields. The one lookup by such a field is of a declared App's Actions, found by the
 * App's `name` (preflight.ts): two declared Apps of one `name` are refused when an Eval or an Experiment refers to
 * Actions of one of them. Two Context Sources of one Context and `file` are not even twins: each uploads the file on
 * its own create and reads its own signed URL, by which the provider finds it again, and one file under two splitter
 * configurations is a fair use. What else is refused: a logical name used twice in one map (a YAML syntax error: map
 * keys are unique, reported at the second with the map's path) and more than one `default: true` ProviderConnection
 * or Model.
 *
 * A document must declare at least one entry: the component manages exactly what its document declares,
 * so an empty one (an empty file, say) would delete everything the stack manages.
 *
 * Every rule that needs no API call is checked here, as zod refinements, so that problems are reported
 * with the file, line, column and field (yaml-file.ts) before the program registers anything. The errors
 * are `pulumi.RunError`s: they explain a mistake in the document, so the CLI prints them without a stack.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { RunError } from "@pulumi/pulumi";
import { z } from "zod";
import type { Kind } from "../provider/kind";
import { type EntrySchema, type SecretSource, entryOf, references, secretForms } from "../provider/workspace-form";
import { KIND_NAMES, type KindName, kinds } from "../resources";
import { REPORT_INPUT, YamlFileError, issueMessage, parseYaml } from "../yaml-file";
import { unknownKeyMessage } from "./suggest";

const LOGICAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const LOGICAL_NAME_RULE = "a logical name is letters, digits, '.', '_' and '-', starting with a letter or a digit";

/** A map from logical name to entry; the logical name also names the Pulumi resource (`<workspace>-<logical name>`). */
const entries = <S extends z.ZodType>(entry: S, description: string) =>
  z
    .record(z.string().regex(LOGICAL_NAME), entry, {
      error: (issue) =>
        issue.code === "invalid_key"
          ? `"${String(issue.path?.at(-1) ?? "")}" is not a valid logical name: ${LOGICAL_NAME_RULE}`
          : undefined,
    })
    .optional()
    .describe(description);

/** A kind's entry in the document: its inputs, but what its workspace form (`Kind.workspace`) writes instead. */
type EntryOf<K extends KindName> = (typeof kinds)[K] extends Kind<infer I, infer _O, infer _N, infer D> ? EntrySchema<I, D> : never;

/** The entry of `kind`, from its inputs and its workspace form (src/provider/workspace-form.ts). */
const entrySchema = (kind: KindName): z.ZodObject => {
  // One kind at a time, which TypeScript sees as any of them: the document's type names each kind's own (`EntryOf`).
  const declared: Kind = kinds[kind];
  return entryOf(declared, declared.workspace?.form(declared.inputs) ?? {});
};

/** A kind's map in the document: its name in camelCase, plural (`fineTunes`). */
export type SectionOf<K extends KindName> = `${Uncapitalize<K>}s`;
const sectionOf = <K extends KindName>(kind: K): SectionOf<K> => `${kind[0]!.toLowerCase()}${kind.slice(1)}s` as SectionOf<K>;

/** The document's shape alone, a map per kind of the registry in its order: what the JSON Schema describes. */
export const WorkspaceDocument = z
  .strictObject(
    Object.fromEntries(KIND_NAMES.map((kind) => [sectionOf(kind), entries(entrySchema(kind), kinds[kind].workspaceSection)])) as {
      [K in KindName as SectionOf<K>]: z.ZodOptional<z.ZodRecord<z.ZodString, EntryOf<K>>>;
    },
  )
  .describe("A GMS workspace declared for pulumi-gms's Workspace component: each kind is a map from a logical name to an entry.");

/** Each kind's map in the document. */
export const SECTION_OF = Object.fromEntries(KIND_NAMES.map((kind) => [kind, sectionOf(kind)])) as { [K in KindName]: SectionOf<K> };

/** A workspace document as a program writes it. */
export type WorkspaceSpec = z.input<typeof WorkspaceDocument>;
/** A validated workspace document (defaults filled in, loader names normalized). */
export type ParsedWorkspaceSpec = z.output<typeof WorkspaceDocument>;

/** The maps of the document, one per kind. */
export type Section = keyof ParsedWorkspaceSpec;

export type Path = (string | number)[];
export interface SpecProblem {
  path: Path;
  message: string;
}

/** The absolute path of a Context Source's `file`, which is relative to the document. */
export const contextFilePath = (baseDir: string, file: string): string => resolve(baseDir, file);

/** A reference to an Action: the App that holds it as the document writes it, and the Action's name, each with its path. */
export interface ActionUse {
  app: string;
  appPath: Path;
  action: string;
  path: Path;
}

/** Every reference to an Action: each Eval's `action`, each Experiment's two Actions within its `app`. */
export function actionUses(spec: ParsedWorkspaceSpec): ActionUse[] {
  const uses: ActionUse[] = [];
  for (const [key, experiment] of Object.entries(spec.experiments ?? {})) {
    const appPath = ["experiments", key, "app"];
    uses.push({ app: experiment.app, appPath, action: experiment.primaryAction, path: ["experiments", key, "primaryAction"] });
    uses.push({ app: experiment.app, appPath, action: experiment.secondaryAction, path: ["experiments", key, "secondaryAction"] });
  }
  for (const [key, entry] of Object.entries(spec.evals ?? {}))
    uses.push({
      app: entry.action.app,
      appPath: ["evals", key, "action", "app"],
      action: entry.action.action,
      path: ["evals", key, "action", "action"],
    });
  return uses;
}

/**
 * The rules across fields and entries: references to declared entries, the name of a declared App whose Actions are
 * looked up, one default, url/file. `baseDir` (the document's directory) enables the check that each `file` exists.
 */
export function crossCheck(spec: ParsedWorkspaceSpec, baseDir: string | undefined): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const add = (path: Path, message: string) => problems.push({ path, message });
  const list = <S extends Section>(section: S) =>
    Object.entries(spec[section] ?? {}) as [string, NonNullable<ParsedWorkspaceSpec[S]>[string]][];
  const declared = (section: Section) => Object.keys(spec[section] ?? {});
  const names = (section: Section) => declared(section).join(", ") || "none";

  if ((Object.keys(WorkspaceDocument.shape) as Section[]).every((section) => declared(section).length === 0)) add([], EMPTY_DOCUMENT);

  // The Actions of a declared App are looked up by the App's name (preflight.ts): another declared App of that name
  // would make the lookup ambiguous. Twins nothing looks up are declared, with a warning (see the top of this file).
  const viaActions = actionUses(spec).filter((use) => spec.apps?.[use.app] !== undefined);
  const firstApp = new Map<string, string>();
  for (const [key, app] of list("apps")) {
    const first = firstApp.get(app.name);
    if (first === undefined) {
      firstApp.set(app.name, key);
      continue;
    }
    const refs = [...new Set(viaActions.filter((use) => spec.apps![use.app]!.name === app.name).map((use) => use.appPath.join(".")))];
    if (refs.length === 0) continue;
    add(
      ["apps", key, "name"],
      `an App named "${app.name}" is already declared as apps.${first}; ${refs.join(", ")} ${refs.length === 1 ? "refers" : "refer"} ` +
        `to Actions of App "${app.name}", which are looked up by the App's name, so the two cannot be told apart. Give one another name`,
    );
  }
  for (const section of ["providerConnections", "models"] as const) {
    const defaults = list(section).filter(([, entry]) => entry.default === true);
    for (const [key] of defaults.slice(1))
      add([section, key, "default"], `only one of ${section} can be the default; ${section}.${defaults[0]![0]} already is`);
  }

  // Each logical name of an entry under another map (`entryRef`), wherever its entry's form holds one.
  const refer = (form: z.ZodType, value: unknown, path: Path): void => {
    const kind = references.get(form);
    if (kind !== undefined && typeof value === "string") {
      // A kind's `entryRef` names a kind of the registry (test/workspace checks each reference's message).
      const section = SECTION_OF[kind as KindName];
      if (!spec[section]?.[value]) add(path, `no ${kind} "${value}" is declared under ${section} (declared: ${names(section)})`);
    } else if (form instanceof z.ZodOptional || form instanceof z.ZodNullable) refer(form.unwrap() as z.ZodType, value, path);
    else if (form instanceof z.ZodUnion) for (const option of form.options as z.ZodType[]) refer(option, value, path);
    else if (form instanceof z.ZodObject && isObject(value))
      for (const [name, field] of Object.entries(form.shape as Record<string, z.ZodType>))
        refer(field, (value as Record<string, unknown>)[name], [...path, name]);
  };
  for (const [section, map] of Object.entries(WorkspaceDocument.shape) as [Section, z.ZodOptional<z.ZodRecord>][])
    for (const [key, entry] of Object.entries(spec[section] ?? {})) refer(map.unwrap().valueType as z.ZodType, entry, [section, key]);

  for (const [key, entry] of list("evals")) {
    const typeNames = entry.evalTypes.map((type) => (typeof type === "string" ? type : type.type));
    typeNames.forEach((name, index) => {
      if (typeNames.indexOf(name) !== index) add(["evals", key, "evalTypes", index], `lists Eval type "${name}" more than once`);
    });
  }
  for (const [key, source] of list("contextSources")) {
    if (source.url !== undefined && source.file !== undefined) {
      add(
        ["contextSources", key, "file"],
        "set either url or file, not both: url is an address the service fetches, file is uploaded on create",
      );
    } else if (source.url === undefined && source.file === undefined) {
      add(
        ["contextSources", key],
        "a Context Source needs its content: set url (an http(s) address the service fetches) or file (a path, relative to this document, to upload)",
      );
    } else if (source.file !== undefined && baseDir !== undefined) {
      const full = contextFilePath(baseDir, source.file);
      if (!existsSync(full)) add(["contextSources", key, "file"], `file ${source.file} does not exist (looked for ${full})`);
      else if (statSync(full).isDirectory())
        add(["contextSources", key, "file"], `${source.file} is a directory; a Context Source takes one file`);
    }
    if (source.waitForIndexing !== undefined && source.waitForIndexing !== false && source.process !== true) {
      add(["contextSources", key, "waitForIndexing"], "waits for processing, which only starts with process: true");
    }
  }
  return problems;
}

/** A secret the document names: where (the entry's map, its logical name, its field) and where from. */
export interface SecretUse {
  section: Section;
  key: string;
  field: string;
  source: SecretSource;
}

/** Every secret the document names: each field whose form is a `secretSource`, in each entry that gives it. */
export function secretUses(spec: ParsedWorkspaceSpec): SecretUse[] {
  const uses: SecretUse[] = [];
  for (const [section, map] of Object.entries(WorkspaceDocument.shape) as [Section, z.ZodOptional<z.ZodRecord>][]) {
    const shape = (map.unwrap().valueType as z.ZodObject).shape as Record<string, z.ZodType>;
    const fields = Object.keys(shape).filter((field) => {
      let form = shape[field]!;
      while (form instanceof z.ZodOptional) form = form.unwrap() as z.ZodType;
      return secretForms.has(form);
    });
    for (const [key, entry] of Object.entries(spec[section] ?? {}) as [string, Record<string, unknown>][])
      for (const field of fields) if (entry[field] !== undefined) uses.push({ section, key, field, source: entry[field] as SecretSource });
  }
  return uses;
}

/** The problem of a document without a single entry, located at the document itself. */
export const EMPTY_DOCUMENT =
  "declares no resources: an empty workspace would delete everything this stack manages; remove the component (or the stack) to do that on purpose";

/**
 * The schema a document is validated with: the shape, then the cross-field rules. An unknown key, at any
 * level where the document is strict, is reported on its own (one problem per key, located at the key) and
 * names the nearest key its object accepts when that is close enough to be a typo of it (`suggest.ts`).
 */
export const workspaceSchema = (baseDir?: string) => {
  const checked = WorkspaceDocument.superRefine((spec, context) => {
    for (const problem of crossCheck(spec, baseDir)) context.addIssue({ code: "custom", path: problem.path, message: problem.message });
  });
  return z.unknown().transform((value, context): ParsedWorkspaceSpec => {
    // The keys each object with unknown keys accepts, by the object itself: the issue that reports it carries it as its input.
    const accepted = new WeakMap<object, string[]>();
    const result = checked.safeParse(value, {
      ...REPORT_INPUT,
      error: (issue) => {
        // The options of a union that are objects each report the same input: the keys of all of them are accepted.
        if (issue.code === "unrecognized_keys" && isObject(issue.input))
          accepted.set(issue.input, [
            ...(accepted.get(issue.input) ?? []),
            ...Object.keys((issue.inst as z.ZodObject | undefined)?.shape ?? {}),
          ]);
        return undefined;
      },
    });
    if (result.success) return result.data;
    const valid = (input: unknown) => (isObject(input) ? (accepted.get(input) ?? []) : []);
    for (const issue of result.error.issues) {
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) context.addIssue({ ...issue, keys: [key], message: unknownKeyMessage(key, valid(issue.input)) });
      } else if (issue.code === "invalid_union") {
        // A value matching no option of a union (`{ config }` or `{ env }`, say) keeps the union's message, which names the
        // options, and adds the keys that no option accepts.
        const unknown = keysNoOptionAccepts(issue);
        const note = unknown.map((key) => unknownKeyMessage(key, valid(issue.input)).replace("unknown key", `unknown key "${key}"`));
        context.addIssue({ ...issue, ...(note.length ? { message: `${issue.message} (${note.join("; ")})` } : {}) } as z.core.$ZodRawIssue);
      } else {
        context.addIssue(issue as z.core.$ZodRawIssue);
      }
    }
    return z.NEVER;
  });
};

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;

/** The keys of a value that every option of a union that is an object reported as unknown; none when no option is an object. */
function keysNoOptionAccepts(issue: z.core.$ZodIssueInvalidUnion): string[] {
  const unknownPerOption = issue.errors
    .map((option) => option.flatMap((inner) => (inner.code === "unrecognized_keys" && inner.path.length === 0 ? inner.keys : [])))
    .filter(
      (keys, index) => keys.length > 0 || issue.errors[index]!.some((inner) => inner.code !== "invalid_type" || inner.path.length > 0),
    );
  if (unknownPerOption.length === 0) return [];
  return unknownPerOption[0]!.filter((key) => unknownPerOption.every((keys) => keys.includes(key)));
}

/** A problem located in the document: line and column when it came from a file. */
export interface LocatedProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/**
 * Every problem of a workspace document, each as `file:line:column: field: message` (or `source: field: message`
 * for an object). A `pulumi.RunError`: the message is the whole story, so the CLI prints it without a stack.
 */
export class WorkspaceSpecError extends RunError {
  override readonly name = "WorkspaceSpecError";
  constructor(
    readonly source: string,
    readonly problems: LocatedProblem[],
    options?: ErrorOptions,
  ) {
    super(
      problems
        .map(
          (problem) =>
            `${source}${problem.line === undefined ? "" : `:${problem.line}:${problem.column}`}: ${problem.path ? `${problem.path}: ` : ""}${problem.message}`,
        )
        .join("\n"),
      options,
    );
  }
}

/** A validated document and where it came from, able to locate later problems (lookups) in it. */
export interface LoadedSpec {
  spec: ParsedWorkspaceSpec;
  /** The file name as given, or a description of the object. */
  source: string;
  /** The directory `file` paths are relative to. */
  baseDir: string;
  /** An error naming each problem with its position. */
  error(problems: SpecProblem[]): WorkspaceSpecError;
}

/** Reads and validates a workspace file; every problem is reported at once, with file, line, column and field. */
export function loadWorkspaceFile(file: string): LoadedSpec {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new WorkspaceSpecError(file, [{ path: "", message: `cannot read the workspace file: ${(error as Error).message}` }], {
      cause: error,
    });
  }
  return loadWorkspaceText(text, file, dirname(resolve(file)));
}

/** Validates a workspace document's text; `source` names it in messages, `baseDir` is where its `file` paths start. */
export function loadWorkspaceText(text: string, source: string, baseDir: string): LoadedSpec {
  const spec = located(() => parseYaml(text, source, workspaceSchema(baseDir), YAML_OPTIONS));
  return {
    spec,
    source,
    baseDir,
    error(problems) {
      // The same locator as the parse: the problems become issues of a schema that accepts anything else.
      const flag = z.unknown().superRefine((_, context) => {
        for (const problem of problems) context.addIssue({ code: "custom", path: problem.path, message: problem.message });
      });
      try {
        parseYaml(text, source, flag, YAML_OPTIONS);
      } catch (error) {
        if (error instanceof YamlFileError) return fromYamlError(error);
        throw error;
      }
      return new WorkspaceSpecError(source, []);
    },
  };
}

/** Validates a document given as an object (a program's `spec`); positions are field paths only. */
export function loadWorkspaceObject(value: unknown, source: string, baseDir: string = process.cwd()): LoadedSpec {
  const error = (problems: SpecProblem[]) =>
    new WorkspaceSpecError(
      source,
      problems.map((problem) => ({ path: problem.path.map(String).join("."), message: problem.message })),
    );
  const result = workspaceSchema(baseDir).safeParse(value ?? {}, REPORT_INPUT);
  if (!result.success) {
    throw error(
      result.error.issues.map((issue) => ({
        path: [...issue.path, ...(issue.code === "unrecognized_keys" ? [issue.keys[0]!] : [])].map((part) =>
          typeof part === "symbol" ? String(part) : part,
        ),
        message: issueMessage(issue),
      })),
    );
  }
  return { spec: result.data, source, baseDir, error };
}

/** A key written twice in a kind's map is a logical name declared twice. */
const YAML_OPTIONS = {
  duplicateKey: (mapPath: string[], key: string) =>
    mapPath.length === 1 && Object.hasOwn(WorkspaceDocument.shape, mapPath[0]!)
      ? `duplicate logical name "${key}"`
      : `duplicate key "${key}"`,
};

function located<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof YamlFileError) throw fromYamlError(error);
    throw error;
  }
}

const fromYamlError = (error: YamlFileError) => new WorkspaceSpecError(error.source, error.problems, { cause: error });
