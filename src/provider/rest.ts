/**
 * A kind's API operations derived from its endpoint entries (src/api/endpoint.ts) and its field declarations: a
 * field is bound to the wire by its name, which is the package-side name of a wire field in the entries' codecs
 * (src/api/wire.ts). What the create body's codec takes is what create sends, what the update body's codec takes
 * is what an update may send (the changed fields among them; when none is, no PUT), the record a GET answers is
 * what read returns, and the lost-create lookup lists the collection and keeps the records whose create fields
 * equal what create sent. A kind writes code only for its quirks, through `RestOptions` (a narrower lookup, a field
 * every PUT requires, a field held in another form than the wire's, a failure in the user's terms) or, for an
 * operation that is more than one call, an override built on the derived ones.
 */
import { z } from "zod";
import { type Endpoint, call, createWith, listAll } from "../api/endpoint";
import type { CreatedCandidate, GmsClient } from "../client";
import { failure } from "./errors";
import type { InputFields, InputValues, OutputFields } from "./fields";
import type { Kind, Outputs } from "./kind";
import type { AsInputs, DocumentForm } from "./workspace-form";
import { sameValue } from "./values";

export interface RestEndpoints {
  /**
   * The collection the lost-create lookup lists (under a parent when its path has parameters: `RestOptions.listBy`,
   * `RestOptions.pathBy`): paged as its form pages, or answered whole in one array when it has no paging form.
   */
  list: Endpoint;
  /** The whole collection, listed instead of `list` for an object under no parent (a `listBy` input that is null). */
  listWithoutParent?: Endpoint;
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
   * create sends. A field the listed records do not show under its name is not compared: `narrow` decides by it.
   */
  matchOn?: readonly FieldName<I>[];
  /**
   * Values create and update send in place of the declared ones, computed from the inputs: a link sent in place of
   * the type it stands for (Model), a field held in another form than the body codec's (Eval's `{guid, variables}`
   * type choices, sent as `{guid, metadata: {variables}}` selections). The create's identity and the lost-create
   * lookup use them too.
   */
  sent?(inputs: InputValues<I>): Partial<Record<FieldName<I>, unknown>>;
  /**
   * The kind's outputs from a record the entries answer, where it holds a field in another form than the record's
   * (Eval's Dataset is a GUID, answered as `{guid, name}`): applied to every record, created, read, updated or listed
   * by the lookup, so the lookup compares the inputs with records in their form. Default: the record as it is.
   */
  received?(record: Outputs): Outputs;
  /**
   * The lost-create lookup's matches narrowed by what the records show of a create field only indirectly (under
   * another name, in another case, through another object). `values` are the inputs with `sent` applied.
   */
  narrow?(client: GmsClient, matches: Outputs[], values: InputValues<I>): Promise<Outputs[]>;
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
   * A refused create or update in the user's terms. Default: a create's failure names the object (`label`), an
   * update's error stays the client's (its 404 means the object is gone). `state` is the stored object, on update.
   */
  explain?(client: GmsClient, error: unknown, operation: "create" | "update", inputs: InputValues<I>, state?: Outputs): Promise<unknown>;
  /** The operations that are more than the derived call, written over the derived ones. */
  overrides?(derived: DerivedOperations<I>): Partial<DerivedOperations<I>>;
}

/** The package-side names an object codec takes (the output side of `wire(...)`, or the schema itself), or its items'. */
function namesOf(schema: z.ZodType | undefined): string[] {
  const side = (schema as { out?: z.ZodType } | undefined)?.out ?? schema;
  if (side instanceof z.ZodArray) return namesOf(side.element as z.ZodType);
  return side instanceof z.ZodObject ? Object.keys(side.shape) : [];
}

const pick = (values: Record<string, unknown>, names: readonly string[]) =>
  Object.fromEntries(names.filter((name) => values[name] !== undefined).map((name) => [name, values[name]]));

/** Every record of a list endpoint: paged as its form pages, else the one array it answers. */
export const listed = async (client: GmsClient, entry: Endpoint, params: Record<string, string>): Promise<unknown[]> =>
  entry.list ? listAll(client, entry, { params }) : ((await call(client, entry, { params })) as unknown[]);

/** create, findCreated, read, update and delete of a kind from its entries and options. */
function restOperations<I extends InputFields>(endpoints: RestEndpoints, options: RestOptions<I>): DerivedOperations<I> {
  const createNames = namesOf(endpoints.create.body);
  const updateNames = new Set(namesOf(endpoints.update?.body));
  const matchOn: readonly string[] = options.matchOn ?? createNames;
  const listBy = Object.entries(options.listBy ?? {});
  const pathBy = Object.entries(options.pathBy ?? {});
  /** Path parameters, each the value of its field in `values` (inputs, or the stored state). */
  const paramsOf = (pairs: [string, string][], values: object): Record<string, string> =>
    Object.fromEntries(pairs.map(([param, field]) => [param, (values as Record<string, unknown>)[field] as string]));
  /** The parameters every route carries (`pathBy`). */
  const under = (values: object) => paramsOf(pathBy, values);
  const sentValues = (inputs: InputValues<I>) => ({ ...inputs, ...options.sent?.(inputs) }) as Record<string, unknown>;
  const received = (record: unknown) => (options.received ? options.received(record as Outputs) : (record as Outputs));
  const explain = async (client: GmsClient, error: unknown, operation: "create" | "update", inputs: InputValues<I>, state?: Outputs) => {
    if (options.explain) return options.explain(client, error, operation, inputs, state);
    return operation === "create" ? failure(`Cannot create ${options.label(inputs)}`, error) : error;
  };

  // The operations as the kind ends up with them, overrides included: a derived one calls the others through it.
  const ops = {} as DerivedOperations<I>;
  const derived: DerivedOperations<I> = {
    async create(client, inputs) {
      const values = sentValues(inputs);
      try {
        const created = await createWith(client, endpoints.create, {
          params: under(values),
          body: pick(values, createNames),
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
      const values = sentValues(inputs);
      const whole = endpoints.listWithoutParent;
      const entry = whole && listBy.some(([, field]) => values[field] == null) ? whole : endpoints.list;
      const carriedBy = [...pathBy, ...(entry === endpoints.list ? listBy : [])];
      const params = paramsOf(carriedBy, values);
      // The fields the records show are compared, except those the list's path carries: listing under them matched them.
      const shown = new Set(namesOf(entry.response));
      const carried = new Set(carriedBy.map(([, field]) => field));
      const compared = matchOn.filter((name) => shown.has(name) && !carried.has(name));
      const matches = (await listed(client, entry, params))
        .map(received)
        .filter((record) => compared.every((name) => sameValue(record[name] ?? null, values[name] ?? null)));
      const found = options.narrow ? await options.narrow(client, matches, values as InputValues<I>) : matches;
      return found.map((record) => ({ guid: record.guid as string, createdAt: record.createdAt as string | undefined }));
    },
    read: async (client, guid, state) => received(await call(client, endpoints.get, { params: { ...under(state), guid } })),
    async update(client, guid, news, changed, state) {
      const entry = endpoints.update;
      if (!entry) throw new TypeError(`${options.label(news)}: the kind declares no update endpoint`);
      // A change the PUT does not take (a setting of the provider's own, such as a wait) sends nothing.
      if (![...changed].some((name) => updateNames.has(name))) return state;
      const names = [...new Set([...changed, ...(options.alwaysSent ?? [])])].filter((name) => updateNames.has(name));
      const body = pick(sentValues(news), names);
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

/** A kind declared by its fields, its operations derived from `endpoints` (see the top of this file), its field types inferred. */
export function restKind<I extends InputFields, O extends OutputFields, N extends string, D extends DocumentForm<I> = AsInputs>(
  declaration: Omit<Kind<I, O, N, D>, RestOperations | "identity"> & { identity: readonly (readonly FieldName<I>[])[] },
  endpoints: RestEndpoints,
  options: RestOptions<I>,
): Kind<I, O, N, D> {
  const listing = {
    list: endpoints.list,
    ...(endpoints.listWithoutParent ? { whole: endpoints.listWithoutParent } : {}),
    by: { ...options.listBy, ...options.pathBy },
  };
  return { ...declaration, listing, ...restOperations<I>(endpoints, options) } as Kind<I, O, N, D>;
}
