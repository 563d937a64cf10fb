/**
 * Model: an LLM on a provider type, with its own credential. Only `llm` changes in place. The create
 * response is the service's persistence record and echoes the submitted key: only the GUID and the linked
 * connection's numeric id are read from it, so the key never reaches outputs, logs or errors.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type ModelCreatedLink, type ModelRecord, modelsApi } from "../api/models";
import { HttpUrl } from "../api/common";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { defineKind, type Outputs } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { keyRedactedFailure, providerAdvice } from "../provider/errors";
import { abandonCreate } from "../provider/undo-create";
import * as shim from "../shims/model";

export const modelKind = defineKind({
  name: "Model",
  description:
    "A Model of the workspace: an LLM on a provider type, with its own credential. The service " +
    "links it to the workspace's ProviderConnection of the same type, if there is one.",
  inputs: {
    llm: updatable(z.string().min(1, "must name a model, for example gpt-4o"), "The model name at the provider, for example `gpt-4o`.", {
      required: true,
    }),
    provider: replaceOnly(
      z.string().min(1, "must name a provider type, for example openai"),
      "The provider type, for example `openai` or `anthropic` (in any case), or a ProviderConnection's GUID (the Model is then linked to " +
        "it). The service checks it on create. Kept as written while the service shows the same type (or that connection's link).",
      { required: true },
    ),
    key: replaceOnly(
      z.string().min(1, "must not be empty"),
      "The provider credential. Stored as a secret; write-only (the service never returns it), " +
        "so a key rotated outside Pulumi is not detected. Changing it replaces the Model.",
      { required: true, secret: true, writeOnly: true },
    ),
    url: replaceOnly(
      HttpUrl.nullable(),
      "The provider endpoint (http or https), or null for the provider's default. Not returned by the service, so refresh keeps the declared value.",
      {
        default: null,
        writeOnly: true,
      },
    ),
    default: replaceOnly(z.boolean(), "Whether this is the workspace's default Model. Set on create only.", { default: false }),
  },
  outputs: {
    guid: computed(z.string(), "The Model's GUID."),
    providerGuid: computed(
      z.string().nullable().optional(),
      "The GUID of the ProviderConnection the service linked the Model to, or null when there is none.",
    ),
    workspaceModelProviderId: computed(
      z.number().int(),
      "The numeric id of the ProviderConnection the Model is linked to (the service's `workspaceModelProviderId`), what a FineTune's " +
        "`providerConnection` takes. Only the create answer shows it: state keeps it while the Model stays linked to that connection. " +
        "Left out when the Model is linked to none, and when Pulumi did not see the create answer (an adopted Model, a lost answer).",
    ),
    createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
    updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
  },
  async create(client, inputs) {
    const what = `Cannot create Model "${inputs.llm}" on provider "${inputs.provider}"`;
    const body = { llm: inputs.llm!, provider: inputs.provider!, key: inputs.key!, url: inputs.url, default: inputs.default };
    let created: ModelCreatedLink;
    try {
      created = await modelsApi.create(client, body, () => this.findCreated(client, inputs));
    } catch (error) {
      throw keyRedactedFailure(inputs.key, what, error, providerAdvice(error, inputs.url));
    }
    // The create response has no provider name or linked connection GUID: read the public record.
    const linked = { workspaceModelProviderId: created.workspaceModelProviderId ?? undefined };
    try {
      return { ...(await this.read(client, created.guid, inputs)), ...linked };
    } catch (error) {
      return abandonCreate(client, {
        path: modelsApi.recordPath(created.guid),
        kindLabel: "Model",
        guid: created.guid,
        message: keyRedactedFailure(inputs.key, `${what}: reading the new Model back failed`, error).message,
        record: { guid: created.guid, llm: inputs.llm, provider: inputs.provider, default: inputs.default, ...linked },
      });
    }
  },
  async findCreated(client, inputs) {
    const models = await modelsApi.list(client);
    return models
      .filter((model) => model.llm === inputs.llm && namesProvider(inputs.provider!, model))
      .map((model) => ({ guid: model.guid, createdAt: model.createdAt }));
  },
  async read(client, guid, state) {
    return toOutputs(await modelsApi.get(client, guid), state);
  },
  async update(client, guid, news, _changed, state) {
    // PUT takes `llm` only, the one updatable field, and answers the public record.
    return toOutputs(await modelsApi.update(client, guid, { llm: news.llm! }), state);
  },
  async delete(client, guid) {
    await modelsApi.delete(client, guid);
  },
});

/**
 * Whether `declared` names the Model's provider: the service takes a provider type in any case, or the GUID
 * of a connection (which the Model is then linked to); a service that shows no provider name matches any.
 */
const namesProvider = (declared: string, model: ModelRecord): boolean =>
  model.providerName == null || declared.toLowerCase() === model.providerName.toLowerCase() || declared === model.providerGuid;

/**
 * The public record as outputs. The declared `provider` stays while it names what the service shows. The
 * connection's numeric id, which only the create answer shows, comes from `state` while the Model is still
 * linked to the connection state records (another link or none drops it).
 */
const toOutputs = (model: ModelRecord, state: Outputs) => ({
  guid: model.guid,
  llm: model.llm,
  // Undefined keeps the declared value: when it names the same provider, or the service does not say.
  provider: typeof state.provider === "string" && namesProvider(state.provider, model) ? undefined : (model.providerName ?? undefined),
  default: model.default,
  providerGuid: model.providerGuid,
  workspaceModelProviderId: model.providerGuid && model.providerGuid === state.providerGuid ? state.workspaceModelProviderId : undefined,
  createdAt: model.createdAt,
  updatedAt: model.updatedAt,
});

export type ModelArgs = KindArgs<typeof modelKind>;
export interface Model extends KindOutputs<typeof modelKind> {}
export class Model extends GmsResource {
  constructor(name: string, args: ModelArgs, opts?: pulumi.CustomResourceOptions) {
    super(modelKind, shim, name, args, opts);
  }
}
