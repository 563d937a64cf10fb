/**
 * ProviderConnection: the workspace's credential for one model provider. Only `nickname` and `default`
 * change in place; the key is write-only, so the service can neither show nor change it.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { HttpUrl } from "../api/common";
import { modelsApi } from "../api/models";
import { type ProviderRecord, providersApi } from "../api/providers";
import type { CreatedCandidate, GmsClient } from "../client";
import { keyRedactedFailure, providerAdvice } from "../provider/errors";
import { abandonCreate } from "../provider/undo-create";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { defineKind } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import * as shim from "../shims/provider-connection";

export const providerConnectionKind = defineKind({
  name: "ProviderConnection",
  description:
    "A connection of the workspace to a model provider (its type, credential and endpoint). The credential is write-only: the service never returns it.",
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
      z.array(z.strictObject({ name: z.string().min(1, "must not be empty"), value: z.unknown().optional() })),
      "Provider-specific settings as `{name, value}` entries. Create only: not returned by the service.",
      { writeOnly: true },
    ),
  },
  outputs: {
    guid: computed(z.string(), "The connection's GUID."),
    createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
    updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
  },
  async create(client, inputs) {
    const what = `Cannot create ProviderConnection for provider "${inputs.provider}"`;
    const body = {
      provider: inputs.provider!,
      key: inputs.key!,
      url: inputs.url,
      name: inputs.name,
      default: inputs.default,
      model: inputs.model,
      metadata: inputs.metadata,
    };
    let created: ProviderRecord;
    try {
      created = await providersApi.create(client, body, () => this.findCreated(client, inputs));
    } catch (error) {
      throw keyRedactedFailure(inputs.key, what, error, providerAdvice(error, inputs.url));
    }
    // Create takes no nickname (the service derives one): set a declared one with the PUT.
    if (inputs.nickname === undefined || inputs.nickname === created.nickname) return created;
    try {
      return await providersApi.update(client, created.guid, { nickname: inputs.nickname });
    } catch (error) {
      return abandonCreate(client, {
        path: providersApi.recordPath(created.guid),
        kindLabel: "ProviderConnection",
        guid: created.guid,
        message: keyRedactedFailure(inputs.key, `${what}: setting its nickname failed`, error).message,
        record: created,
      });
    }
  },
  async findCreated(client, inputs) {
    const connections = await providersApi.list(client);
    return ofProviderType(
      client,
      connections.filter((connection) => connection.name === inputs.name && connection.url === inputs.url),
      inputs.provider!,
    );
  },
  async read(client, guid) {
    return providersApi.get(client, guid);
  },
  async update(client, guid, news, changed, state) {
    // The service requires `nickname` on every PUT: send the declared one, else the one the service chose.
    const nickname = news.nickname ?? (state.nickname as string | undefined) ?? (await providersApi.get(client, guid)).nickname;
    const body = { nickname, default: changed.has("default") ? news.default : undefined };
    return providersApi.update(client, guid, body);
  },
  async delete(client, guid) {
    await providersApi.delete(client, guid);
  },
});

/**
 * The connections among `connections` that may be of provider type `type`, with their creation times. The
 * service never returns a connection's type (nor its key or metadata), but two things show it: a connection
 * created without a name starts with its type as its nickname (spec: not shown; the emulator's choice), and
 * the object of a lost create answer keeps it, since a declared nickname is set only once the answer is in;
 * and a Model linked to a connection names its type (`provider_name`). A connection either of them shows to be
 * of another type is left out; one neither shows (named, no Model linked) stays, identified by name and url alone.
 */
async function ofProviderType(client: GmsClient, connections: ProviderRecord[], type: string): Promise<CreatedCandidate[]> {
  const sameType = (other: string) => other.toLowerCase() === type.toLowerCase();
  let candidates = connections.filter((connection) => connection.name !== null || sameType(connection.nickname));
  if (candidates.some((connection) => connection.name !== null)) {
    const linkedTypes = new Map<string, string>();
    for (const model of await modelsApi.list(client)) {
      if (model.providerGuid && model.providerName) linkedTypes.set(model.providerGuid, model.providerName);
    }
    candidates = candidates.filter((connection) => {
      const linked = linkedTypes.get(connection.guid);
      return linked === undefined || sameType(linked);
    });
  }
  return candidates.map((connection) => ({ guid: connection.guid, createdAt: connection.createdAt }));
}

export type ProviderConnectionArgs = KindArgs<typeof providerConnectionKind>;
export interface ProviderConnection extends KindOutputs<typeof providerConnectionKind> {}
export class ProviderConnection extends GmsResource {
  constructor(name: string, args: ProviderConnectionArgs, opts?: pulumi.CustomResourceOptions) {
    super(providerConnectionKind, shim, name, args, opts);
  }
}
