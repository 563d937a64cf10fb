/**
 * Model: an LLM on a provider type, with its own credential. Only `llm` changes in place. The create
 * response is the service's persistence record and echoes the submitted key: only the GUID is read from
 * it, so the key never reaches outputs, logs or errors.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type ModelRecord, modelsApi } from "../api/models";
import { HttpUrl } from "../api/common";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { defineKind } from "../provider/kind";
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
      "The provider type, for example `openai` or `anthropic`. The service checks it against its catalog on create.",
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
    createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
    updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
  },
  async create(client, inputs) {
    const what = `Cannot create Model "${inputs.llm}" on provider "${inputs.provider}"`;
    const body = { llm: inputs.llm!, provider: inputs.provider!, key: inputs.key!, url: inputs.url, default: inputs.default };
    let created: { guid: string };
    try {
      created = await modelsApi.create(client, body, () => this.findCreated(client, inputs));
    } catch (error) {
      throw keyRedactedFailure(inputs.key, what, error, providerAdvice(error, inputs.url));
    }
    // The create response has no provider name or linked connection GUID: read the public record.
    try {
      return await this.read(client, created.guid, {});
    } catch (error) {
      return abandonCreate(client, {
        path: modelsApi.recordPath(created.guid),
        kindLabel: "Model",
        guid: created.guid,
        message: keyRedactedFailure(inputs.key, `${what}: reading the new Model back failed`, error).message,
        record: { guid: created.guid, llm: inputs.llm, provider: inputs.provider, default: inputs.default },
      });
    }
  },
  async findCreated(client, inputs) {
    const models = await modelsApi.list(client);
    return models
      .filter((model) => model.llm === inputs.llm && (model.providerName ?? inputs.provider) === inputs.provider)
      .map((model) => ({ guid: model.guid, createdAt: model.createdAt }));
  },
  async read(client, guid) {
    return toOutputs(await modelsApi.get(client, guid));
  },
  async update(client, guid, news) {
    // PUT takes `llm` only, the one updatable field, and answers the public record.
    return toOutputs(await modelsApi.update(client, guid, { llm: news.llm! }));
  },
  async delete(client, guid) {
    await modelsApi.delete(client, guid);
  },
});

const toOutputs = (model: ModelRecord) => ({
  guid: model.guid,
  llm: model.llm,
  // Null when the service does not say; the declared value is kept then.
  provider: model.providerName ?? undefined,
  default: model.default,
  providerGuid: model.providerGuid,
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
