/**
 * The one place the wire's names meet the package's. A body or a response is declared once, in the wire's
 * names (the service's snake_case, as the spec shows them), and `wire(...)` makes it a zod codec whose output is
 * the same shape in the package's camelCase: the client decodes what it receives (`schema.parse`) and encodes
 * what it sends (`z.encode`), the emulator decodes what it is sent and encodes what it answers. No kind writes
 * a mapper in either direction.
 *
 * Keys are renamed in objects only (nested objects, arrays of them and unions of them included), never inside
 * a record of free keys (`z.record`: metadata, input values), whose keys are data. A value of a union takes the
 * first option that accepts it (on the wire's side when decoding, on the package's when encoding).
 */
import { z } from "zod";

/** `created_at` → `createdAt`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/** A wire value's type in the package's names. */
export type Camelized<T> = T extends readonly (infer Item)[]
  ? Camelized<Item>[]
  : T extends Record<string, unknown>
    ? string extends keyof T
      ? T
      : { [K in keyof T as K extends string ? CamelCase<K> : K]: Camelized<T[K]> }
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
function convert(schema: z.ZodType, value: unknown, direction: Direction): unknown {
  if (value === null || value === undefined) return value;
  const shape = inner(schema);
  if (shape instanceof z.ZodArray && Array.isArray(value)) return value.map((item) => convert(shape.element as z.ZodType, item, direction));
  if (shape instanceof z.ZodUnion) {
    const options = shape.options as z.ZodType[];
    const taken = options.find((option) => (direction === "decode" ? option : packageSide(option)).safeParse(value).success);
    return taken ? convert(taken, value, direction) : value;
  }
  if (shape instanceof z.ZodObject && typeof value === "object") {
    const source = value as Record<string, unknown>;
    const converted: Record<string, unknown> = {};
    for (const [wireName, field] of Object.entries(shape.shape as Record<string, z.ZodType>)) {
      const name = camelCase(wireName);
      const [from, to] = direction === "decode" ? [wireName, name] : [name, wireName];
      if (source[from] !== undefined) converted[to] = convert(field, source[from], direction);
    }
    return converted;
  }
  return value;
}

/** Each wire schema's package side, made once. */
const packageSides = new WeakMap<z.ZodType, z.ZodType>();

/** The package-side schema of a wire schema: the same checks, object keys in the package's names. */
function packageSide(schema: z.ZodType): z.ZodType {
  let side = packageSides.get(schema);
  if (side === undefined) {
    side = packageSideOf(schema);
    packageSides.set(schema, side);
  }
  return side;
}

function packageSideOf(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional) return packageSide(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodNullable) return packageSide(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodDefault) return packageSide(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodArray) return z.array(packageSide(schema.element as z.ZodType));
  if (schema instanceof z.ZodUnion) return z.union((schema.options as z.ZodType[]).map(packageSide));
  if (schema instanceof z.ZodObject) {
    const fields = Object.entries(schema.shape as Record<string, z.ZodType>).map(
      ([wireName, field]) => [camelCase(wireName), packageSide(field)] as const,
    );
    // A strict object stays strict, so that a union's options stay told apart.
    return schema.def.catchall instanceof z.ZodNever ? z.strictObject(Object.fromEntries(fields)) : z.object(Object.fromEntries(fields));
  }
  return schema;
}

/** A wire body or response, as a codec from the wire's names to the package's (see the top of this file). */
export type WireCodec<W extends z.ZodType> = z.ZodCodec<W, z.ZodType<Camelized<z.output<W>>, Camelized<z.output<W>>>>;

export function wire<W extends z.ZodType>(schema: W): WireCodec<W> {
  return z.codec(schema, packageSide(schema) as z.ZodType<Camelized<z.output<W>>, Camelized<z.output<W>>>, {
    decode: (value) => convert(schema, value, "decode") as Camelized<z.output<W>>,
    encode: (value) => convert(schema, value, "encode") as never,
  });
}
