/**
 * The one place the wire's names meet the package's. A body or a response is declared once, in the wire's
 * names (the service's snake_case, as the spec shows them), and `wire(...)` makes it a zod codec whose output is
 * the same shape in the package's camelCase: the client decodes what it receives (`schema.parse`) and encodes
 * what it sends (`z.encode`), the emulator decodes what it is sent and encodes what it answers. No kind writes
 * a mapper in either direction.
 *
 * Keys are renamed in objects only (nested objects and arrays of them included), never inside a record of
 * free keys (`z.record`: metadata, input values), whose keys are data. A name that is not the camelCase of its
 * wire name is given in `renames`.
 */
import { z } from "zod";

/** `created_at` → `createdAt`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/** Wire names given a package name that is not their camelCase (see `wire`). */
type Renames = Readonly<Record<string, string>>;

/** A wire key's package name: as `R` renames it, else its camelCase. */
type PackageName<K, R extends Renames> = K extends keyof R ? R[K] : K extends string ? CamelCase<K> : K;

/** A wire value's type in the package's names. */
export type Camelized<T, R extends Renames = {}> = T extends readonly (infer Item)[]
  ? Camelized<Item, R>[]
  : T extends Record<string, unknown>
    ? string extends keyof T
      ? T
      : { [K in keyof T as PackageName<K, R>]: Camelized<T[K], R> }
    : T;

/** `created_at` → `createdAt`: a wire name in the package's case (also a stored column's, src/emulator/store/columns.ts). */
export const camelCase = (name: string): string => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

type Direction = "decode" | "encode";

/** The schema without the wrappers that keep its shape (optional, nullable, default). */
function inner(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodDefault) {
      current = current.unwrap() as z.ZodType;
    } else return current;
  }
}

/** `value` (shaped by `schema`) with every object key renamed in `direction`. */
function convert(schema: z.ZodType, value: unknown, direction: Direction, renames: Renames): unknown {
  if (value === null || value === undefined) return value;
  const shape = inner(schema);
  if (shape instanceof z.ZodArray && Array.isArray(value))
    return value.map((item) => convert(shape.element as z.ZodType, item, direction, renames));
  if (shape instanceof z.ZodObject && typeof value === "object") {
    const source = value as Record<string, unknown>;
    const converted: Record<string, unknown> = {};
    for (const [wireName, field] of Object.entries(shape.shape as Record<string, z.ZodType>)) {
      const name = renames[wireName] ?? camelCase(wireName);
      const [from, to] = direction === "decode" ? [wireName, name] : [name, wireName];
      if (source[from] !== undefined) converted[to] = convert(field, source[from], direction, renames);
    }
    return converted;
  }
  return value;
}

/** The package-side schema of a wire schema: the same checks, object keys in the package's names. */
function packageSide(schema: z.ZodType, renames: Renames): z.ZodType {
  if (schema instanceof z.ZodOptional) return packageSide(schema.unwrap() as z.ZodType, renames).optional();
  if (schema instanceof z.ZodNullable) return packageSide(schema.unwrap() as z.ZodType, renames).nullable();
  if (schema instanceof z.ZodDefault) return packageSide(schema.unwrap() as z.ZodType, renames);
  if (schema instanceof z.ZodArray) return z.array(packageSide(schema.element as z.ZodType, renames));
  if (schema instanceof z.ZodObject) {
    const fields = Object.entries(schema.shape as Record<string, z.ZodType>).map(
      ([wireName, field]) => [renames[wireName] ?? camelCase(wireName), packageSide(field, renames)] as const,
    );
    return z.object(Object.fromEntries(fields));
  }
  return schema;
}

/** A wire body or response, as a codec from the wire's names to the package's (see the top of this file). */
export type WireCodec<W extends z.ZodType, R extends Renames = {}> = z.ZodCodec<
  W,
  z.ZodType<Camelized<z.output<W>, R>, Camelized<z.output<W>, R>>
>;

export function wire<W extends z.ZodType, const R extends Renames = {}>(schema: W, renames: R = {} as R): WireCodec<W, R> {
  return z.codec(schema, packageSide(schema, renames) as z.ZodType<Camelized<z.output<W>, R>, Camelized<z.output<W>, R>>, {
    decode: (value) => convert(schema, value, "decode", renames) as Camelized<z.output<W>, R>,
    encode: (value) => convert(schema, value, "encode", renames) as never,
  });
}
