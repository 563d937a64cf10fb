/**
 * The dynamic-provider contract, derived once from a kind's field declaration:
 * - check validates every field with zod and reports `{property, reason}`; it never calls the API and
 *   lets the engine's unknown marker through during preview;
 * - diff compares declared inputs with the stored outputs: no change, no diff, no API call; a changed
 *   replace-only field is listed in `replaces`;
 * - create adopts an existing object when `adopt` names one, else creates;
 * - read returns the live object as outputs and inputs (empty id when gone); write-only values stay;
 * - update passes only the changed fields to the kind; delete treats 404 as already gone.
 * Every kind also takes `connection` (secret; changing it never replaces) and `adopt` (a GUID).
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { z } from "zod";
import { GmsError, NotFoundError } from "../client";
import { Connection, clientFor } from "./connection";
import { failure } from "./errors";
import type { InputField } from "./fields";
import { COMMON_INPUTS, type CheckFailure, type Kind, type Outputs } from "./kind";
import { containsUnknown, sameValue } from "./values";
import { Guid } from "../api/common";

type Props = Record<string, unknown>;

const PROVIDER_KEY = "__provider";

export function resourceProvider(kind: Kind): Required<Omit<dynamic.ResourceProvider, "configure">> {
  const fields = Object.entries(kind.inputs) as [string, InputField][];

  /** The declared fields whose new value differs from the stored one (a left-out field without a default is not managed). */
  const changedFields = (olds: Props, news: Props): string[] =>
    fields
      .filter(([name, field]) => !(news[name] === undefined && field.default === undefined))
      .filter(([name]) => containsUnknown(news[name]) || !sameValue(olds[name], news[name]))
      .map(([name]) => name);

  /** Outputs as stored: declared inputs (write-only ones from the program), then what the API says. */
  const outputsOf = (inputs: Props, record: Outputs): Outputs => {
    const outs: Outputs = {};
    for (const [name, field] of fields) {
      const value = field.writeOnly || record[name] === undefined ? inputs[name] : record[name];
      if (value !== undefined) outs[name] = value;
    }
    for (const name of Object.keys(kind.outputs)) if (record[name] !== undefined) outs[name] = record[name];
    for (const name of COMMON_INPUTS) if (inputs[name] !== undefined) outs[name] = inputs[name];
    return outs;
  };

  const clientOf = (props: Props) => clientFor(props.connection as Connection | undefined);

  return {
    async check(_olds: Props, news: Props) {
      const failures: CheckFailure[] = [];
      const inputs: Props = {};
      /** A known value is parsed (failures named by property path); the engine's unknown marker passes as is. */
      const checkValue = (name: string, schema: z.ZodType, value: unknown) => {
        if (containsUnknown(value)) {
          inputs[name] = value;
          return;
        }
        const parsed = schema.safeParse(value);
        if (parsed.success) inputs[name] = parsed.data;
        else failures.push(...parsed.error.issues.map((issue) => ({ property: [name, ...issue.path.map(String)].join("."), reason: issue.message })));
      };
      for (const [name, value] of Object.entries(news)) {
        if (name === PROVIDER_KEY || value === undefined || name in kind.inputs || name in kind.outputs) continue;
        if ((COMMON_INPUTS as readonly string[]).includes(name)) continue;
        failures.push({ property: name, reason: `${kind.name} has no property "${name}"; it takes ${[...Object.keys(kind.inputs), ...COMMON_INPUTS].join(", ")}` });
      }
      for (const [name, field] of fields) {
        let value = news[name];
        if ((value === undefined || value === null) && field.default !== undefined) value = field.default;
        if (value === undefined || value === null) {
          if (field.required) failures.push({ property: name, reason: `${name} is required` });
          if (value === null) inputs[name] = null;
          continue;
        }
        checkValue(name, field.schema, value);
      }
      for (const [name, schema] of [
        ["connection", Connection],
        ["adopt", Guid],
      ] as const) {
        const value = news[name];
        if (value !== undefined && value !== null) checkValue(name, schema, value);
      }
      if (failures.length === 0 && kind.validate && !containsUnknown(inputs)) {
        failures.push(...kind.validate(inputs as never));
      }
      return { inputs, failures };
    },

    async diff(_id: string, olds: Props, news: Props) {
      const changed = changedFields(olds, news);
      const replaces = changed.filter((name) => kind.inputs[name]!.change === "replace");
      const connectionChanged = !sameValue(olds.connection, news.connection);
      return { changes: changed.length > 0 || connectionChanged, replaces };
    },

    async create(inputs: Props) {
      const client = clientOf(inputs);
      const adopt = inputs.adopt as string | undefined;
      const record = adopt ? await adoptExisting(kind, client, adopt, inputs, changedFields) : await kind.create(client, inputs as never);
      return { id: record.guid as string, outs: outputsOf(inputs, record) };
    },

    async read(id: string, props: Props) {
      const record = await orUndefinedIfGone(kind.read(clientOf(props), id, props));
      if (!record) return { id: "", props: {} };
      const outs = outputsOf(props, record);
      const inputs: Props = {};
      for (const name of [...Object.keys(kind.inputs), ...COMMON_INPUTS]) if (outs[name] !== undefined) inputs[name] = outs[name];
      return { id, props: outs, inputs };
    },

    async update(id: string, olds: Props, news: Props) {
      const changed = changedFields(olds, news).filter((name) => kind.inputs[name]!.change === "update");
      if (changed.length === 0) return { outs: outputsOf(news, olds) };
      const client = clientOf(news);
      try {
        return { outs: outputsOf(news, await kind.update(client, id, news as never, new Set(changed), olds)) };
      } catch (error) {
        // A 404 may name something the update refers to; only a read that 404s too means the object is gone.
        if (error instanceof NotFoundError && !(await orUndefinedIfGone(kind.read(client, id, olds)))) {
          throw new Error(
            `${kind.name} ${id} no longer exists in the workspace (deleted outside Pulumi?): run \`pulumi refresh\` to drop it from the state, then \`pulumi up\` creates it again`,
          );
        }
        // A kind's own explanation passes as it is; a bare client error is worded like the kinds' create failures.
        throw error instanceof GmsError ? failure(`Cannot update ${kind.name} ${id}`, error) : error;
      }
    },

    async delete(id: string, props: Props) {
      await orUndefinedIfGone(kind.delete(clientOf(props), id, props));
    },
  };
}

/**
 * Adopting instead of creating (the engine's import does not work for dynamic resources): the object
 * must exist, its replace-only fields must already match the program, the rest is updated to it.
 */
async function adoptExisting(
  kind: Kind,
  client: ReturnType<typeof clientFor>,
  guid: string,
  inputs: Props,
  changedFields: (olds: Props, news: Props) => string[],
): Promise<Outputs> {
  // The declared inputs stand in for the state a read usually gets (e.g. the parent a child lives under).
  const live = await orUndefinedIfGone(kind.read(client, guid, inputs));
  if (!live) throw new Error(`Cannot adopt ${kind.name} ${guid}: no such object in the workspace`);
  const changed = changedFields(live, inputs).filter((name) => live[name] !== undefined && !kind.inputs[name]!.writeOnly);
  const mismatched = changed.filter((name) => kind.inputs[name]!.change === "replace");
  if (mismatched.length > 0) {
    throw new Error(
      `Cannot adopt ${kind.name} ${guid}: ${mismatched.join(", ")} ${mismatched.length === 1 ? "differs" : "differ"} from the program and cannot be changed in place; declare the existing value or let Pulumi create a new object`,
    );
  }
  return changed.length > 0 ? { ...live, ...(await kind.update(client, guid, inputs as never, new Set(changed), live)) } : live;
}

/** 404 means the object is gone: read reports an empty id, delete succeeds. */
async function orUndefinedIfGone<T>(operation: Promise<T>): Promise<T | undefined> {
  try {
    return await operation;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}
