/**
 * A kind's API operations derived from its endpoint entries (src/api/endpoint.ts) and its field declarations, for
 * a kind whose fields are the record's: a field is bound to the wire by its name, which is the package-side name
 * of a wire field in the entries' codecs (src/api/wire.ts). What the create body's codec takes is what create
 * sends, what the update body's codec takes is what an update may send (the changed fields among them), the
 * record a GET answers is what read returns, and the lost-create lookup lists the collection and keeps the
 * records whose create fields equal the inputs. A kind writes code only for its quirks.
 */
import { z } from "zod";
import { type Endpoint, call, createWith, listAll } from "../api/endpoint";
import type { CreatedCandidate, GmsClient } from "../client";
import { failure } from "./errors";
import type { InputFields, InputValues, OutputFields } from "./fields";
import type { Kind, Outputs } from "./kind";
import { sameValue } from "./values";

export interface RestEndpoints {
  list: Endpoint;
  create: Endpoint;
  get: Endpoint;
  update?: Endpoint;
  delete: Endpoint;
}

/** The package-side names a body codec takes (the output side of `wire(...)`). */
function bodyNames(entry: Endpoint | undefined): string[] {
  const side = (entry?.body as { out?: z.ZodType } | undefined)?.out;
  return side instanceof z.ZodObject ? Object.keys(side.shape) : [];
}

const pick = (values: Record<string, unknown>, names: readonly string[]) =>
  Object.fromEntries(names.filter((name) => values[name] !== undefined).map((name) => [name, values[name]]));

/**
 * create, findCreated, read, update and delete of a kind from its entries. `label` names the object in a
 * failed create's message (`Cannot create App "Support"`).
 */
export function restOperations<I extends InputFields>(
  endpoints: RestEndpoints,
  label: (inputs: InputValues<I>) => string,
): Pick<Kind<I>, RestOperations> {
  const createNames = bodyNames(endpoints.create);
  const updateNames = new Set(bodyNames(endpoints.update));
  const findCreated = async (client: GmsClient, inputs: InputValues<I>): Promise<CreatedCandidate[]> => {
    const sent = pick(inputs, createNames);
    const records = (await listAll(client, endpoints.list)) as Outputs[];
    return records
      .filter((record) => createNames.every((name) => sameValue(record[name] ?? null, sent[name] ?? null)))
      .map((record) => ({ guid: record.guid as string, createdAt: record.createdAt as string | undefined }));
  };
  return {
    async create(client, inputs) {
      try {
        const body = pick(inputs, createNames);
        return (await createWith(client, endpoints.create, { body, findCreated: () => findCreated(client, inputs) })) as Outputs;
      } catch (error) {
        throw failure(`Cannot create ${label(inputs)}`, error);
      }
    },
    findCreated,
    read: async (client, guid) => (await call(client, endpoints.get, { params: { guid } })) as Outputs,
    async update(client, guid, news, changed) {
      if (!endpoints.update) throw new TypeError(`${label(news)}: the kind declares no update endpoint`);
      const body = pick(
        news,
        [...changed].filter((name) => updateNames.has(name)),
      );
      const answer = (await call(client, endpoints.update, { params: { guid }, body })) as Outputs | undefined;
      // An answer the spec does not show is not relied on: the record is read back.
      return endpoints.update.shown === false || answer === undefined ? this.read(client, guid, {}) : answer;
    },
    async delete(client, guid) {
      await call(client, endpoints.delete, { params: { guid } });
    },
  };
}

/** The operations a kind of this form derives (see the top of this file). */
type RestOperations = "create" | "findCreated" | "read" | "update" | "delete";

/** A kind declared by its fields alone, its operations derived from `endpoints`: `defineKind` for such a kind. */
export function restKind<I extends InputFields, O extends OutputFields>(
  declaration: Omit<Kind<I, O>, RestOperations>,
  endpoints: RestEndpoints,
  label: (inputs: InputValues<I>) => string,
): Kind<I, O> {
  return { ...declaration, ...restOperations<I>(endpoints, label) } as Kind<I, O>;
}
