/**
 * Workspace: a component that declares a whole workspace from one document (a YAML file or an object)
 * with the ten resource kinds as its children, references between them resolved by name (spec.ts).
 *
 * Order of events, so that a mistake costs nothing:
 * 1. in the constructor, synchronously: the document is parsed and validated (shape, references to
 *    declared entries, names a lookup could not tell apart, files, secrets available, at least one entry);
 *    any problem throws a WorkspaceSpecError (a `pulumi.RunError`: the CLI prints its message, no stack)
 *    naming file, line, column and field, before the component or anything else registers;
 * 2. the children are declared at once (so `workspace.apps["support"]` exists), but none registers
 *    before the preflight (preflight.ts: lookups by name and the App allowance) has passed: it is an
 *    explicit dependency of each. A failed preflight fails the program in preview, before any write;
 * 3. the engine creates the children with the dependencies their inputs imply (a Workflow after its
 *    App, a Model after its ProviderConnection, an Eval or a fine-tune after its Dataset, a fine-tune after
 *    the Model whose connection it names).
 */
import { relative } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { Connection } from "../provider/connection";
import type { Kind } from "../provider/kind";
import type { SecretSource, WorkspaceContext } from "../provider/workspace-form";
import { KIND_NAMES, type KindName, kinds } from "../resources";
import * as classes from "../resources/classes";
import { type Resolution, actionKey, preflight } from "./preflight";
import {
  type LoadedSpec,
  SECTION_OF,
  type SectionOf,
  type SpecProblem,
  type WorkspaceSpec,
  WorkspaceSpecError,
  contextFilePath,
  loadWorkspaceFile,
  loadWorkspaceObject,
  secretUses,
} from "./spec";
import { nativeToken } from "../provider/tokens";

export interface WorkspaceArgs {
  /** A workspace YAML file, relative to the program directory. Give exactly one of `file` and `spec`. */
  file?: string;
  /** The workspace document as an object (the same format as the file); its `file` paths are relative to the program directory. */
  spec?: WorkspaceSpec;
  /** Where the lookups and every child's API calls go, when not the stack's `gms:baseUrl` / `gms:apiKey`. */
  connection?: pulumi.Input<{ baseUrl?: pulumi.Input<string>; apiKey?: pulumi.Input<string> }>;
}

export const WORKSPACE_TYPE = nativeToken("Workspace");

/** The children, by logical name: a map per kind of the registry, named as its map in the document (`fineTunes`). */
type Children = { readonly [K in KindName as SectionOf<K>]: Record<string, InstanceType<(typeof classes)[K]>> };

// The class's members are its own and, merged in here, the children's maps, which its constructor defines.
export interface Workspace extends Children {}

export class Workspace extends pulumi.ComponentResource {
  constructor(name: string, args: WorkspaceArgs, opts: pulumi.ComponentResourceOptions = {}) {
    const loaded = load(name, args);
    const keys = secrets(loaded);
    super(WORKSPACE_TYPE, name, {}, opts);

    const { spec } = loaded;
    const connection = args.connection;
    const resolution = pulumi.unsecret(
      pulumi.output(connection).apply((plain) => preflight(loaded, { connection: plain as Connection | undefined })),
    );
    const resolved = <T>(pick: (resolution: Resolution) => T): pulumi.Output<T> =>
      resolution.apply((value) => pick(value) as pulumi.Unwrap<T>) as pulumi.Output<T>;
    /** One value per name, so that children naming the same object get the same Output (which twin warnings compare). */
    const onePerName = <T>(make: (name: string) => T) => {
      const made = new Map<string, T>();
      return (name: string): T => {
        if (!made.has(name)) made.set(name, make(name));
        return made.get(name)!;
      };
    };

    // A child refers to another by its `id` (the GUID), not its `guid` output: in preview an updated
    // resource's outputs are unknown (the dynamic provider has no preview) but its id is not, so the
    // dependents of an in-place change do not show as replaced.
    const children = (kind: KindName): Record<string, pulumi.CustomResource> => this[SECTION_OF[kind]];
    const context: WorkspaceContext = {
      appGuid: onePerName((ref): pulumi.Input<string> => this.apps[ref]?.id ?? resolved((r) => r.existingApps[ref]!)),
      declaredApp: (ref) => (this.apps[ref] ? [this.apps[ref]] : []),
      contextGuid: onePerName((name) => resolved((r) => r.contexts[name]!)),
      lookedUp: (pick) =>
        resolved((r) =>
          pick({
            action: (app, action) => r.actions[actionKey(app, action)]!.guid,
            evalType: (name) => r.evalTypes[name]!,
          }),
        ),
      // The references a kind follows name kinds of the registry, and entries the document's check found declared.
      entry: (kind, key) => spec[SECTION_OF[kind as KindName]]![key]!,
      child: (kind, key) => children(kind as KindName)[key]!,
      secret: (kind, key, field) => keys.get(`${SECTION_OF[kind as KindName]}\n${key}\n${field}`),
      // A FileAsset path is relative to the program directory (the provider host's working directory).
      file: (path) => new pulumi.asset.FileAsset(relative(process.cwd(), contextFilePath(loaded.baseDir, path))),
    };

    // Each kind's children in the registry's order, which is also the order its references go by (a Model's
    // ProviderConnection, an Eval's Dataset, a fine-tune's Model are made before it). None registers before the
    // preflight has passed: it is a dependency of each, beside what the child is created after. A kind's entry is its
    // child's args but where its workspace form (`Kind.workspace`) makes them: references resolved, secrets read, files.
    for (const kind of KIND_NAMES) {
      const section = SECTION_OF[kind];
      // One kind at a time, which TypeScript sees as any of them: each kind's entries are the ones its form parses.
      const declared: Kind = kinds[kind];
      const Child = classes[kind] as unknown as new (
        name: string,
        args: object,
        opts: pulumi.CustomResourceOptions,
      ) => pulumi.CustomResource;
      const made = Object.fromEntries(
        Object.entries(spec[section] ?? {}).map(([key, entry]) => {
          const { args: childArgs, after = [] } = declared.workspace?.toArgs(key, entry, context) ?? { args: entry };
          const dependsOn = resolution.apply(() => after) as unknown as pulumi.Input<pulumi.Resource[]>;
          return [key, new Child(`${name}-${key}`, { ...childArgs, connection }, { parent: this, dependsOn })];
        }),
      );
      Object.defineProperty(this, section, { value: made, enumerable: true });
    }

    // The children are the component's outputs; registering their Outputs again would only repeat a
    // failed preflight's error under "error serializing property outputs".
    this.registerOutputs({});
  }
}

function load(name: string, args: WorkspaceArgs): LoadedSpec {
  if ((args.file === undefined) === (args.spec === undefined)) {
    throw new WorkspaceSpecError(`Workspace "${name}"`, [
      { path: "", message: "give exactly one of file (a workspace YAML file) and spec (the document as an object)" },
    ]);
  }
  return args.file !== undefined ? loadWorkspaceFile(args.file) : loadWorkspaceObject(args.spec, `Workspace "${name}" spec`);
}

/**
 * The secrets the document names, read now so that a missing one is reported with its position before
 * anything registers. Keyed by `<section>\n<logical name>\n<field>`.
 */
function secrets(loaded: LoadedSpec): Map<string, pulumi.Output<string>> {
  const found = new Map<string, pulumi.Output<string>>();
  const problems: SpecProblem[] = [];
  for (const { section, key, field, source } of secretUses(loaded.spec)) {
    const value = secretValue(source);
    if (typeof value === "string") problems.push({ path: [section, key, field, "config" in source ? "config" : "env"], message: value });
    else found.set(`${section}\n${key}\n${field}`, value);
  }
  if (problems.length > 0) throw loaded.error(problems);
  return found;
}

/** The secret, or why it is not available. */
function secretValue(source: SecretSource): pulumi.Output<string> | string {
  if ("config" in source) {
    const split = source.config.lastIndexOf(":");
    const [namespace, key] = split < 0 ? [undefined, source.config] : [source.config.slice(0, split), source.config.slice(split + 1)];
    const value = new pulumi.Config(namespace).getSecret(key);
    return value ?? `stack config "${source.config}" is not set: run \`pulumi config set --secret ${source.config} <value>\``;
  }
  const value = process.env[source.env];
  return value ? pulumi.secret(value) : `environment variable ${source.env} is not set (or is empty) in the program's environment`;
}
