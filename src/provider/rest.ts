/**
 * A kind's API operations derived from its endpoint entries (src/api/endpoint.ts) and its field declarations: a
 * field is bound to the wire by its name, which is the package-side name of a wire field in the entries' codecs
 * (src/api/wire.ts). What the create body's codec takes is what create sends, what the update body's codec takes
 * is what an update may send (the changed fields among them; when none is, no PUT), the record a GET answers is
 * what read returns, and the lost-create lookup lists the collection and keeps the records whose create fields
 * equal the inputs. A kind writes code only for its quirks, through `RestOptions` (a narrower lookup, a field
 * every PUT requires, a field held in another form than the wire's, a failure in the user's terms) or, for an
 * operation that is more than one call, an override built on the derived ones.
 */
import { z } from "zod";
import { type Endpoint, call, createWith, listAll } from "../api/endpoint";
import type { CreatedCandidate, GmsClient } from "../client";
import { failure } from "./errors";
import type { InputFields, InputValues, OutputFields } from "./fields";
import type { Kind, Outputs } from "./kind";
import { sameValue } from "./values";

export interface RestEndpoints {
  /**
   * The collection the lost-create lookup lists (under a parent when its path has parameters: `RestOptions.listBy`,
   * `RestOptions.pathBy`): page by page as its form pages, or, an entry without a form, its whole array in one call.
   */
  list: Endpoint;
  create: Endpoint;
  get: Endpoint;
  update?: Endpoint;
  delete: Endpoint;
}

/** The operations a kind of this form derives (see the top of this file). */
type RestOperations = "create" | "findCreated" | "read" | "update" | "delete";
export type DerivedOperations<I extends InputFields> = Pick<Kind<I>, RestOperations>;

type FieldName<I extends InputFields> = keyof I & string;

export interface RestOptions<I extends InputFields> {
  /** Names the object in a failed create's message (`Cannot create App "Support"`). */
  label(inputs: InputValues<I>): string;
  /**
   * The create fields that tell a created object apart, compared by the lost-create lookup; creates of the same
   * values are sent one at a time, so the lookup never meets a twin made at the same moment. Default: every field
   * create sends.
   */
  matchOn?: readonly FieldName<I>[];
  /** The list's path parameters, each from the input of that name: `{ guid: "app" }` lists `/apps/{app}/workflows`. */
  listBy?: Readonly<Record<string, FieldName<I>>>;
  /**
   * Path parameters besides `guid` that every route of the object carries (an object that lives under a parent):
   * each from the input of that name, or for read and delete from the stored state. `{ contextGuid: "context" }`
   * reads `/contexts/{context}/context_sources/{guid}` and lists `/contexts/{context}/context_sources`.
   */
  pathBy?: Readonly<Record<string, FieldName<I>>>;
  /** Lists before the POST, so that an object that existed before it is never taken for the created one. */
  listBeforeCreate?: boolean;
  /** Fields every update sends, changed or not (a PUT that requires them). */
  alwaysSent?: readonly FieldName<I>[];
  /**
   * A field's value as the body codecs take it, where the kind holds it in another form than the wire's (Eval's
   * `{guid, variables}` type choices are sent as `{guid, metadata: {variables}}` selections). Default: as it is.
   */
  sentAs?: { [F in FieldName<I>]?: (value: NonNullable<InputValues<I>[F]>) => unknown };
  /**
   * The kind's outputs from a record the entries answer, where it holds a field in another form than the record's
   * (Eval's Dataset is a GUID, answered as `{guid, name}`): applied to every record, created, read, updated or listed
   * by the lookup, so the lookup compares the inputs with records in their form. Default: the record as it is.
   */
  received?(record: Outputs): Outputs;
  /**
   * A refused create or update in the user's terms. Default: a create's failure names the object (`label`), an
   * update's error stays the client's (its 404 means the object is gone). `state` is the stored object, on update.
   */
  explain?(client: GmsClient, error: unknown, operation: "create" | "update", inputs: InputValues<I>, state?: Outputs): Promise<unknown>;
  /** The operations that are more than the derived call, written over the derived ones. */
  overrides?(derived: DerivedOperations<I>): Partial<DerivedOperations<I>>;
}

/** The package-side names an object codec takes (the output side of `wire(...)`, or the schema itself). */
function namesOf(schema: z.ZodType | undefined): string[] {
  const side = (schema as { out?: z.ZodType } | undefined)?.out ?? schema;
  return side instanceof z.ZodObject ? Object.keys(side.shape) : [];
}

const pick = (values: Record<string, unknown>, names: readonly string[]) =>
  Object.fromEntries(names.filter((name) => values[name] !== undefined).map((name) => [name, values[name]]));

/** create, findCreated, read, update and delete of a kind from its entries and options. */
function restOperations<I extends InputFields>(endpoints: RestEndpoints, options: RestOptions<I>): DerivedOperations<I> {
  const createNames = namesOf(endpoints.create.body);
  const updateNames = new Set(namesOf(endpoints.update?.body));
  const matchOn: readonly string[] = options.matchOn ?? createNames;
  const listBy = Object.entries(options.listBy ?? {});
  const pathBy = Object.entries(options.pathBy ?? {});
  /** The path parameters `pathBy` takes from `values` (inputs, or the stored state). */
  const under = (values: object): Record<string, string> =>
    Object.fromEntries(pathBy.map(([param, field]) => [param, (values as Record<string, unknown>)[field] as string]));
  // Fields the list's path carries are matched by listing under them; the records need not repeat them.
  const compared = matchOn.filter((name) => ![...listBy, ...pathBy].some(([, field]) => field === name));
  const forms = (options.sentAs ?? {}) as Record<string, ((value: unknown) => unknown) | undefined>;
  // The fields `names` of the inputs, each in the form the body codecs take.
  const bodyOf = (inputs: InputValues<I>, names: readonly string[]) =>
    Object.fromEntries(Object.entries(pick(inputs, names)).map(([name, value]) => [name, forms[name] ? forms[name](value) : value]));
  const received = (record: unknown) => (options.received ? options.received(record as Outputs) : (record as Outputs));
  const explain = async (client: GmsClient, error: unknown, operation: "create" | "update", inputs: InputValues<I>, state?: Outputs) => {
    if (options.explain) return options.explain(client, error, operation, inputs, state);
    return operation === "create" ? failure(`Cannot create ${options.label(inputs)}`, error) : error;
  };

  // The operations as the kind ends up with them, overrides included: a derived one calls the others through it.
  const ops = {} as DerivedOperations<I>;
  const derived: DerivedOperations<I> = {
    async create(client, inputs) {
      const values = inputs as Record<string, unknown>;
      try {
        const created = await createWith(client, endpoints.create, {
          params: under(values),
          body: bodyOf(inputs, createNames),
          findCreated: () => ops.findCreated(client, inputs),
          listBeforeCreate: options.listBeforeCreate,
          identity: matchOn.map((name) => values[name] ?? null),
        });
        return received(created);
      } catch (error) {
        throw await explain(client, error, "create", inputs);
      }
    },
    async findCreated(client, inputs): Promise<CreatedCandidate[]> {
      const values = inputs as Record<string, unknown>;
      const params = { ...under(values), ...Object.fromEntries(listBy.map(([param, field]) => [param, values[field] as string])) };
      const list = endpoints.list;
      const records = ((list.list ? await listAll(client, list, { params }) : await call(client, list, { params })) as unknown[]).map(
        received,
      );
      return records
        .filter((record) => compared.every((name) => sameValue(record[name] ?? null, values[name] ?? null)))
        .map((record) => ({ guid: record.guid as string, createdAt: record.createdAt as string | undefined }));
    },
    read: async (client, guid, state) => received(await call(client, endpoints.get, { params: { ...under(state), guid } })),
    async update(client, guid, news, changed, state) {
      const entry = endpoints.update;
      if (!entry) throw new TypeError(`${options.label(news)}: the kind declares no update endpoint`);
      // A change the PUT does not take (a setting of the provider's own, such as a wait) sends nothing.
      if (![...changed].some((name) => updateNames.has(name))) return state;
      const sent = [...new Set([...changed, ...(options.alwaysSent ?? [])])].filter((name) => updateNames.has(name));
      const body = bodyOf(news, sent);
      let answer: unknown;
      try {
        answer = await call(client, entry, { params: { ...under(news), guid }, body });
      } catch (error) {
        throw await explain(client, error, "update", news, state);
      }
      // An answer the spec does not show is not relied on: the record is read back.
      return entry.shown === false || answer === undefined ? ops.read(client, guid, state) : received(answer);
    },
    async delete(client, guid, state) {
      await call(client, endpoints.delete, { params: { ...under(state), guid } });
    },
  };
  return Object.assign(ops, derived, options.overrides?.(derived));
}

/** A kind declared by its fields, its operations derived from `endpoints` (see the top of this file): `defineKind` for such a kind. */
export function restKind<I extends InputFields, O extends OutputFields>(
  declaration: Omit<Kind<I, O>, RestOperations>,
  endpoints: RestEndpoints,
  options: RestOptions<I>,
): Kind<I, O> {
  return { ...declaration, ...restOperations<I>(endpoints, options) } as Kind<I, O>;
}
