/**
 * The vocabulary a kind writes its workspace form in (`Kind.workspace`): how its entry in the workspace document
 * differs from its inputs (references to other entries by logical name, secrets by source, files by path) and how
 * such an entry becomes its child's args. The Workspace component (src/workspace) derives the document and the
 * children from the registry of kinds with it; it sits below the kinds, so that a kind declares its form in its own
 * file without reaching the component.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import type { InputArgs, InputField, InputFields } from "./fields";

/** A name the document writes: not empty. */
export const Name = z.string().min(1, "must not be empty");

/** A kind's own field schema, described in the document's terms where they differ from the kind's. */
export const described = <F extends InputField>(declared: F, description: string): F["schema"] =>
  declared.schema.describe(description) as F["schema"];

const SecretSourceForm = z
  .union(
    [
      z.strictObject({
        config: Name.describe(
          "A stack config key (`pulumi config set --secret <key> ...`), in the project's namespace unless written `namespace:key`.",
        ),
      }),
      z.strictObject({
        env: Name.describe("An environment variable of the program (`pulumi up` runs it); the value is wrapped as a secret."),
      }),
    ],
    { error: "must be { config: <stack config key> } or { env: <environment variable> }: secrets are never written in the file" },
  )
  .describe(
    "Where the secret comes from: `{ config: <key> }` (a secret stack config value) or `{ env: <VARIABLE> }`. Never the secret itself.",
  );
export type SecretSource = z.output<typeof SecretSourceForm>;

/** The document forms that name where a secret comes from (see `entryOf`). */
export const secretForms = new WeakSet<z.ZodType>();

/** A secret field as the document writes it: where the value comes from, never the value. */
export const secretSource = (
  declared: InputField,
  description = `${declared.description} Written as \`{ config: <key> }\` (a secret stack config value) or \`{ env: <VARIABLE> }\`, never the value itself.`,
) => {
  const form = SecretSourceForm.describe(description);
  secretForms.add(form);
  return form;
};

/** The document forms that name an entry declared under another map: the kind of that map, by form. */
export const references = new WeakMap<z.ZodType, string>();

/** `form`, a logical name of an entry declared under the map of `kind` (or a form around one: nullable, say). */
export const entryRef = <S extends z.ZodType>(kind: string, form: S): S => {
  references.set(form, kind);
  return form;
};

/**
 * An App, as the document refers to it. The Apps that exist are looked up by name for the references the preflight
 * lists (src/workspace/preflight.ts: Workflows', Datasets', fine-tunes' and Actions' Apps); a new kind that refers to
 * a declared App writes `entryRef("App", ...)`.
 */
export const AppRef = Name.describe(
  "An App: the logical name of an App declared under `apps`, otherwise the name of an App " +
    "that already exists in the workspace (for example one configured outside Pulumi).",
);

/** An Action, as the document refers to it: the App that holds it and its name. */
export const ActionRef = z
  .strictObject({
    app: AppRef,
    action: Name.describe("The Action's name. Actions are configured outside the public interface, in Apps that exist in the workspace."),
  })
  .describe("An Action, by the App that holds it and its name.");

const AdoptField = Guid.describe(
  "The GUID of an existing object to adopt instead of creating one (a replace-only " +
    "field that differs from it is an error; anything else is updated to this entry).",
).optional();

/** What a kind's document writes in its own terms instead of an input, by input. */
export type DocumentForm<I extends InputFields> = { [K in keyof I]?: z.ZodType };
/** The form of a kind whose entry is its inputs as they are. */
export type AsInputs = Record<never, z.ZodType>;

type Requiredness<S extends z.ZodType, R> = R extends true ? S : z.ZodOptional<S>;
/** The shape `entryOf` builds: each input in the kind's declared order, then `adopt`. */
export type EntryShape<I extends InputFields, D> = {
  -readonly [K in keyof I]: Requiredness<K extends keyof D ? Extract<D[K], z.ZodType> : I[K]["schema"], I[K]["required"]>;
} & { adopt: typeof AdoptField };
/** A kind's entry in the document, as the document's schema builds it. */
export type EntrySchema<I extends InputFields, D> = z.ZodObject<EntryShape<I, D>, z.core.$strict>;
/** A kind's entry, as parsed. */
export type Entry<I extends InputFields, D> = z.output<EntrySchema<I, D>>;

/**
 * A kind's entry in the document, derived from the kind's field declarations: every input, in declared
 * order, with the kind's own schema and description, required when the kind requires it (a default
 * makes a field optional: the kind fills it in). `documentForm` holds what the document writes in its
 * own terms instead: references by logical name or by a name looked up during preview where the kind
 * takes a GUID, a file by its path where the kind takes an asset; such a form is made optional like the
 * field it stands for, and may be optional itself where the document can leave out what the kind needs.
 * A field declared `secret` must have a `secretSource` form: a secret is never written in the document,
 * and a kind that adds one fails here, when the module loads, rather than accept it in clear text.
 */
export function entryOf<I extends InputFields, D extends DocumentForm<I>>(
  kind: { name: string; inputs: I },
  documentForm: D,
): EntrySchema<I, D> {
  for (const name of Object.keys(documentForm)) {
    if (!Object.hasOwn(kind.inputs, name))
      throw new TypeError(`The workspace form of ${kind.name} names "${name}", which is no input of the kind`);
  }
  const shape = Object.fromEntries(
    Object.entries(kind.inputs).map(([name, declared]) => {
      const form = (documentForm as Record<string, z.ZodType | undefined>)[name];
      const bare = form instanceof z.ZodOptional ? (form.unwrap() as z.ZodType) : form;
      if (declared.secret && !(bare && secretForms.has(bare)))
        throw new TypeError(`${kind.name}.${name} is declared secret: its workspace form must be a secretSource, never the value itself`);
      const schema = form ?? declared.schema.describe(declared.description);
      return [name, declared.required ? schema : schema.optional()];
    }),
  );
  // The shape is built by name at run time; its type is the one `EntryShape` computes from the same declarations.
  return z.strictObject({ ...shape, adopt: AdoptField }) as unknown as EntrySchema<I, D>;
}

/** The GUIDs the preflight looked up by name: what the document names but cannot create. */
export interface LookedUp {
  action(app: string, action: string): string;
  evalType(name: string): string;
}

/** What a kind's entry is turned into its child's args with: the other entries, their children, what was looked up. */
export interface WorkspaceContext {
  /** An App's GUID: the declared App's id, otherwise that of the App of that name that exists (one Output per name). */
  appGuid(ref: string): pulumi.Input<string>;
  /** The child of the App the reference names, when it names a declared one (none otherwise). */
  declaredApp(ref: string): pulumi.Resource[];
  /** A Context's GUID, by its name (one Output per name). */
  contextGuid(name: string): pulumi.Input<string>;
  /** A value made of GUIDs the preflight looked up, once it has passed. */
  lookedUp<T>(pick: (found: LookedUp) => T): pulumi.Output<T>;
  /** The entry declared under the map of `kind` as `key` (the document's references to it were checked). */
  entry(kind: string, key: string): Readonly<Record<string, unknown>>;
  /** The child of the entry declared under the map of `kind` as `key`. */
  child(kind: string, key: string): pulumi.CustomResource;
  /** The secret the entry `key` of `kind` names in `field` (read as the document was loaded), if it names one. */
  secret(kind: string, key: string, field: string): pulumi.Output<string> | undefined;
  /** A file the document names by its path, relative to the document. */
  file(path: string): pulumi.asset.FileAsset;
}

/** A child's args made from its entry (the component adds its connection), and what it is created after besides its inputs. */
export interface ChildArgs<I extends InputFields> {
  args: InputArgs<I> & { adopt?: pulumi.Input<string> };
  after?: pulumi.Resource[];
}

/**
 * A kind's entry in the workspace document where it is not the kind's inputs as they are: `form`, what the document
 * writes instead of inputs (from the kind's own input declarations), and `toArgs`, its child's args made from an entry.
 */
export interface KindWorkspace<I extends InputFields, D extends DocumentForm<I> = DocumentForm<I>> {
  form(inputs: I): D;
  toArgs(key: string, entry: Entry<I, D>, context: WorkspaceContext): ChildArgs<I>;
}
