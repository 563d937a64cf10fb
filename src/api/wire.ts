/**
 * The one place the wire's names meet the package's. A body or a response is declared once, in the wire's
 * names (the service's snake_case, as the spec shows them), and `wire(...)` makes it a zod codec whose output is
 * the same shape in the package's camelCase: the client decodes what it receives (`schema.parse`) and encodes
 * what it sends (`z.encode`), the emulator decodes what it is sent and encodes what it answers. No kind writes
 * a mapper in either direction.
 *
 * Keys are renamed in objects only (nested objects, arrays of them and unions of them included), never inside
 * a record of free keys (`z.record`: metadata, input values), whose keys are data. A value of a union takes the
 * first option that accepts it (on the wire's side when decoding, on the package's when encoding). A name that is
 * not the camelCase of its wire name is given in `renames`.
 */
import { z } from "zod";

/** `created_at` → `createdAt`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/** Wire names whose package-side name is not their camelCase (`wire`'s `renames`). */
type Renames = Readonly<Record<string, string>>;
type NoRenames = Readonly<Record<never, string>>;

/** A wire name in the package's: its rename, else its camelCase. */
type PackageName<K extends string, R extends Renames> = K extends keyof R ? R[K] : CamelCase<K>;

/** A wire value's type in the package's names. */
export type Camelized<T, R extends Renames = NoRenames> = T extends readonly (infer Item)[]
  ? Camelized<Item, R>[]
  : T extends Record<string, unknown>
    ? string extends keyof T
      ? T
      : { [K in keyof T as K extends string ? PackageName<K, R> : K]: Camelized<T[K], R> }
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

/** Renames the object keys of a value shaped by one schema, in one direction. */
type Converter = (value: unknown) => unknown;

/** Each schema's converter, made once per set of renames and direction (a codec converts every value it is given). */
const converters = new WeakMap<Renames, Record<Direction, WeakMap<z.ZodType, Converter>>>();

/** `value` (shaped by `schema`) with every object key renamed in `direction`. */
function convert(schema: z.ZodType, value: unknown, direction: Direction, renames: Renames): unknown {
  return converterOf(schema, direction, renames)(value);
}

function converterOf(schema: z.ZodType, direction: Direction, renames: Renames): Converter {
  let byDirection = converters.get(renames);
  if (byDirection === undefined) converters.set(renames, (byDirection = { decode: new WeakMap(), encode: new WeakMap() }));
  let converter = byDirection[direction].get(schema);
  if (converter === undefined) {
    converter = makeConverter(schema, direction, renames);
    byDirection[direction].set(schema, converter);
  }
  return converter;
}

const unchanged: Converter = (value) => value;

/**
 * The converter of one schema, read from its shape once. A field's converter is looked up at its first value, not
 * here, so that a schema that contains itself (through a getter) is read no deeper than the values it is given.
 */
function makeConverter(schema: z.ZodType, direction: Direction, renames: Renames): Converter {
  const shape = inner(schema);
  if (shape instanceof z.ZodArray) {
    const element = shape.element as z.ZodType;
    return (value) => (Array.isArray(value) ? value.map(converterOf(element, direction, renames)) : value);
  }
  if (shape instanceof z.ZodUnion) {
    const options = shape.options as z.ZodType[];
    return (value) => {
      if (value === null || value === undefined) return value;
      const accepts = (option: z.ZodType) => (direction === "decode" ? option : packageSide(option, renames)).safeParse(value).success;
      const taken = options.find(accepts);
      return taken ? converterOf(taken, direction, renames)(value) : value;
    };
  }
  if (shape instanceof z.ZodObject) {
    const fields = Object.entries(shape.shape as Record<string, z.ZodType>).map(([wireName, field]) => {
      const name = renames[wireName] ?? camelCase(wireName);
      const [from, to] = direction === "decode" ? [wireName, name] : [name, wireName];
      return { from, to, field, converter: undefined as Converter | undefined };
    });
    return (value) => {
      if (value === null || typeof value !== "object") return value;
      const source = value as Record<string, unknown>;
      const converted: Record<string, unknown> = {};
      for (const entry of fields) {
        const item = source[entry.from];
        if (item === undefined) continue;
        if (item === null) {
          converted[entry.to] = null;
          continue;
        }
        entry.converter ??= converterOf(entry.field, direction, renames);
        converted[entry.to] = entry.converter === unchanged ? item : entry.converter(item);
      }
      return converted;
    };
  }
  return unchanged;
}

/** Each wire schema's package side, made once per set of renames. */
const packageSides = new WeakMap<Renames, WeakMap<z.ZodType, z.ZodType>>();

/** The package-side schema of a wire schema: the same checks, object keys in the package's names. */
function packageSide(schema: z.ZodType, renames: Renames): z.ZodType {
  let made = packageSides.get(renames);
  if (made === undefined) packageSides.set(renames, (made = new WeakMap()));
  let side = made.get(schema);
  if (side === undefined) {
    side = packageSideOf(schema, renames);
    made.set(schema, side);
  }
  return side;
}

function packageSideOf(schema: z.ZodType, renames: Renames): z.ZodType {
  if (schema instanceof z.ZodOptional) return packageSide(schema.unwrap() as z.ZodType, renames).optional();
  if (schema instanceof z.ZodNullable) return packageSide(schema.unwrap() as z.ZodType, renames).nullable();
  if (schema instanceof z.ZodDefault) return packageSide(schema.unwrap() as z.ZodType, renames);
  if (schema instanceof z.ZodArray) return z.array(packageSide(schema.element as z.ZodType, renames));
  if (schema instanceof z.ZodUnion) return z.union((schema.options as z.ZodType[]).map((option) => packageSide(option, renames)));
  if (schema instanceof z.ZodObject) {
    const fields = Object.fromEntries(
      Object.entries(schema.shape as Record<string, z.ZodType>).map(
        ([wireName, field]) => [renames[wireName] ?? camelCase(wireName), packageSide(field, renames)] as const,
      ),
    );
    // A strict object stays strict, so that a union's options stay told apart.
    return schema.def.catchall instanceof z.ZodNever ? z.strictObject(fields) : z.object(fields);
  }
  return schema;
}

/** A wire body or response, as a codec from the wire's names to the package's (see the top of this file). */
export type WireCodec<W extends z.ZodType, R extends Renames = NoRenames> = z.ZodCodec<
  W,
  z.ZodType<Camelized<z.output<W>, R>, Camelized<z.output<W>, R>>
>;

export function wire<W extends z.ZodType, const R extends Renames = NoRenames>(schema: W, renames: R = {} as R): WireCodec<W, R> {
  return z.codec(schema, packageSide(schema, renames) as z.ZodType<Camelized<z.output<W>, R>, Camelized<z.output<W>, R>>, {
    decode: (value) => convert(schema, value, "decode", renames) as Camelized<z.output<W>, R>,
    encode: (value) => convert(schema, value, "encode", renames) as never,
  });
}
