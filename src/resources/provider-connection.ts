/**
 * ProviderConnection: the workspace's credential for one model provider. Only `nickname` and `default`
 * change in place; the key is write-only, so the service can neither show nor change it. Its operations are
 * derived from its endpoint entries (src/api/providers.ts); its quirks: create takes no nickname, so a declared
 * one costs a PUT after the POST (the connection deleted again when it fails); every PUT requires the nickname;
 * the lookup narrows by provider type, which no record shows; and a refused create never repeats the key.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { HttpUrl } from "../api/common";
import { listAll } from "../api/endpoint";
import { modelEndpoints } from "../api/models";
import { type ProviderRecord, providerEndpoints } from "../api/providers";
import type { GmsClient } from "../client";
import { keyRedactedFailure, providerAdvice } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import { secretSource } from "../provider/workspace-form";
import { abandonCreate } from "../provider/undo-create";
import * as shim from "../shims/provider-connection";

const label = (inputs: { provider?: string | undefined }) => `ProviderConnection for provider "${inputs.provider}"`;

export const providerConnectionKind = restKind(
  {
    name: "ProviderConnection",
    description:
      "A connection of the workspace to a model provider (its type, credential and endpoint). The credential is write-only: the service never returns it.",
    quirks: [
      "The key is write-only: the service never returns it, so `refresh` cannot see it change, and an import must be given it.",
      "Only `nickname` and `default` change in place; another key, url, name, model or metadata replaces the connection.",
    ],
    workspaceSection: "Connections to model providers, by logical name. Keys come from the stack config or the environment.",
    identity: [["name"], ["nickname"]],
    inputs: {
      provider: replaceOnly(
        z.string().min(1, "must name a provider type, for example openai"),
        "The provider type, for example `openai` or `anthropic`. The service checks it against its " +
          "catalog on create. Not returned by the service, so refresh keeps the declared value.",
        { required: true, writeOnly: true },
      ),
      key: replaceOnly(
        z.string().min(1, "must not be empty"),
        "The provider credential. Stored as a secret; write-only (the service never returns it), " +
          "so a key rotated outside Pulumi is not detected. Changing it replaces the connection.",
        { required: true, secret: true, writeOnly: true },
      ),
      url: replaceOnly(HttpUrl.nullable(), "The provider endpoint (http or https), or null for the provider's default endpoint.", {
        default: null,
      }),
      name: replaceOnly(z.string().min(1, "must not be empty").nullable(), "The connection's name, or null.", { default: null }),
      nickname: updatable(
        z.string().min(1, "must not be empty"),
        "The connection's display name. When left out the service chooses it (the name, else the provider type) and Pulumi leaves it alone.",
      ),
      default: updatable(z.boolean(), "Whether this is the workspace's default connection.", { default: false }),
      model: replaceOnly(
        z.string().min(1, "must name a model, for example gpt-4o"),
        "An initial Model (its `llm`) the service creates on this connection. Create only: " +
          "not returned by the service, and that Model is not managed by this resource.",
        { writeOnly: true },
      ),
      metadata: replaceOnly(
        z.array(
          z.strictObject({
            name: z.string().min(1, "must not be empty"),
            value: z.unknown().optional(),
          }),
        ),
        "Provider-specific settings as `{name, value}` entries. Create only: not returned by the service.",
        { writeOnly: true },
      ),
    },
    outputs: {
      guid: computed(z.string(), "The connection's GUID."),
      createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
      updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
    },
    workspace: {
      form: (inputs) => ({ key: secretSource(inputs.key) }),
      toArgs: (key, entry, context) => {
        const { key: _secret, ...fields } = entry;
        return { args: { ...fields, key: context.secret("ProviderConnection", key, "key")! } };
      },
    },
  },
  providerEndpoints,
  {
    label,
    // Connections carry no type: a lost create is told apart by name and url, then by type as far as it shows.
    matchOn: ["name", "url"],
    narrow: (client, matches, inputs) => ofProviderType(client, matches as ProviderRecord[], inputs.provider!, inputs.nickname),
    // The service requires the nickname on every PUT (see `update` below for one the program leaves out).
    alwaysSent: ["nickname"],
    async explain(_client, error, operation, inputs) {
      if (operation === "update") return error;
      return keyRedactedFailure(inputs.key, `Cannot create ${label(inputs)}`, error, providerAdvice(error, inputs.url));
    },
    overrides: (derived) => ({
      async create(client, inputs) {
        const created = await derived.create(client, inputs);
        // Create takes no nickname (the service derives one): set a declared one with the PUT.
        if (inputs.nickname === undefined || inputs.nickname === created.nickname) return created;
        const guid = created.guid as string;
        try {
          return await derived.update(client, guid, inputs, new Set(["nickname"]), created);
        } catch (error) {
          return abandonCreate({
            remove: () => derived.delete(client, guid, {}),
            kindLabel: "ProviderConnection",
            guid,
            message: keyRedactedFailure(inputs.key, `Cannot create ${label(inputs)}: setting its nickname failed`, error).message,
            record: created,
          });
        }
      },
      async update(client, guid, news, changed, state) {
        // The declared nickname, else the one the service chose.
        const nickname =
          news.nickname ?? (state.nickname as string | undefined) ?? ((await derived.read(client, guid, state)).nickname as string);
        return derived.update(client, guid, { ...news, nickname }, changed, state);
      },
    }),
  },
);

/**
 * The connections among `connections` that may be of provider type `type`. The
 * service never returns a connection's type (nor its key or metadata), but two things show it: a connection
 * created without a name starts with its type as its nickname (spec: not shown; the emulator's choice), and
 * the object of a lost create answer keeps it, since a declared nickname is set only once the answer is in
 * (an unnamed one that has the declared nickname already is one whose create went that far, as a pending create
 * a killed run left may have); and a Model linked to a connection names its type (`provider_name`). A connection either of them shows to be
 * of another type is left out; one neither shows (named, no Model linked) stays, identified by name and url alone.
 */
async function ofProviderType(
  client: GmsClient,
  connections: ProviderRecord[],
  type: string,
  nickname: string | undefined,
): Promise<ProviderRecord[]> {
  const sameType = (other: string) => other.toLowerCase() === type.toLowerCase();
  let candidates = connections.filter(
    (connection) =>
      connection.name !== null || sameType(connection.nickname) || (nickname !== undefined && connection.nickname === nickname),
  );
  if (candidates.some((connection) => connection.name !== null || !sameType(connection.nickname))) {
    const linkedTypes = new Map<string, string>();
    for (const model of await listAll(client, modelEndpoints.list)) {
      if (model.providerGuid && model.providerName) linkedTypes.set(model.providerGuid, model.providerName);
    }
    candidates = candidates.filter((connection) => {
      const linked = linkedTypes.get(connection.guid);
      return linked === undefined || sameType(linked);
    });
  }
  return candidates;
}

export type ProviderConnectionArgs = KindArgs<typeof providerConnectionKind>;
export interface ProviderConnection extends KindOutputs<typeof providerConnectionKind> {}
export class ProviderConnection extends GmsResource {
  constructor(name: string, args: ProviderConnectionArgs, opts?: pulumi.CustomResourceOptions) {
    super(providerConnectionKind, shim, name, args, opts);
  }
}
