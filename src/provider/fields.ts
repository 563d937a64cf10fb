/**
 * The field declaration every kind writes once. check, diff, the outputs list, secret outputs and the
 * generated `schema.json` all derive from it (pulumi-command's habit: no kind hand-writes its diff).
 */
import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";

export type ChangeBehaviour = "update" | "replace";

export interface InputField<S extends z.ZodType = z.ZodType, R extends boolean = boolean> {
  kind: "input";
  /** Validates a known value (camelCase, as the program passes it). */
  schema: S;
  /** What changing the value does: update in place, or replace the object. */
  change: ChangeBehaviour;
  /**
   * Literal in each declaration, so that a resource class's args type makes the field mandatory. A required
   * write-only field is required to create the object only (see `requiredToDeclare`).
   */
  required: R;
  /** Marked secret in state whether or not the caller passed a secret. */
  secret: boolean;
  /** The API never returns it: refresh keeps the value from state. */
  writeOnly: boolean;
  /** Filled in by check when the program leaves the field out, so that omitting it is a managed value. */
  default?: unknown;
  description: string;
  /**
   * The field is on its way out: what to use instead (`Use \`summary\` instead.`). schema.json carries it as the
   * property's `deprecationMessage` (the SDKs generated from it warn), the reference pages show it, and a program
   * that sets the field is warned (./deprecation.ts). It is removed only in a release that may break (docs/upgrading.md).
   */
  deprecated?: string;
}

export interface OutputField<S extends z.ZodType = z.ZodType> {
  kind: "output";
  schema: S;
  /** Marked secret in state (e.g. a signed URL, a credential for its lifetime). */
  secret: boolean;
  description: string;
  /** The output is on its way out: what to read instead (schema.json's `deprecationMessage`, the reference pages). */
  deprecated?: string;
}

type InputOptions = Partial<Pick<InputField, "required" | "secret" | "writeOnly" | "default" | "deprecated">>;
type RequiredOf<O extends InputOptions> = O extends { required: true } ? true : false;

/**
 * Whether every declaration must give the field, an existing object's included. A required write-only value (a key)
 * is required to create the object only: the service never returns it, so a program that imported the object
 * cannot know it, and leaving it out then keeps the value the object has.
 */
export const requiredToDeclare = (field: InputField): boolean => field.required && !field.writeOnly;

/** What the reference pages and schema.json say of a field required to create only. */
export const REQUIRED_TO_CREATE =
  "Required to create; a program may leave it out of an object it imported, whose value cannot be read back, and the object keeps it.";

/** A field the API can change on an existing object. */
export const updatable = <S extends z.ZodType, const O extends InputOptions = {}>(
  schema: S,
  description: string,
  options?: O,
): InputField<S, RequiredOf<O>> =>
  ({ kind: "input", schema, change: "update", required: false, secret: false, writeOnly: false, description, ...options }) as InputField<
    S,
    RequiredOf<O>
  >;

/** A field the API cannot change: a different value replaces the object. */
export const replaceOnly = <S extends z.ZodType, const O extends InputOptions = {}>(
  schema: S,
  description: string,
  options?: O,
): InputField<S, RequiredOf<O>> => ({
  ...updatable(schema, description, options),
  change: "replace",
});

/** A value the service computes (guid, slug, timestamps, state). */
export const computed = <S extends z.ZodType>(
  schema: S,
  description: string,
  options: { secret?: boolean; deprecated?: string } = {},
): OutputField<S> => ({
  kind: "output",
  schema,
  secret: options.secret ?? false,
  description,
  ...(options.deprecated === undefined ? {} : { deprecated: options.deprecated }),
});

export type InputFields = Record<string, InputField>;
export type OutputFields = Record<string, OutputField>;

/** The TypeScript type of a kind's inputs as the provider sees them (after check). */
export type InputValues<F extends InputFields> = { [K in keyof F]: z.infer<F[K]["schema"]> | undefined };

/** A value a program passes, each level of it possibly an Output. */
export type Deep<T> = T extends (infer E)[] ? pulumi.Input<Deep<E>>[] : T extends object ? { [K in keyof T]: pulumi.Input<Deep<T[K]>> } : T;

type RequiredKeys<F extends InputFields> = { [K in keyof F]: F[K] extends { required: true } ? K : never }[keyof F];
type OptionalKeys<F extends InputFields> = Exclude<keyof F, RequiredKeys<F>>;
type InputOf<Field extends InputField> = pulumi.Input<Deep<z.input<Field["schema"]>>>;

/** The arguments a program passes for `F`, the inputs of a kind: the required ones, and the others if it gives them. */
export type InputArgs<F extends InputFields> = { [P in RequiredKeys<F>]: InputOf<F[P]> } & {
  [P in OptionalKeys<F>]?: InputOf<F[P]> | null;
};
