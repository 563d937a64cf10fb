/**
 * Model: an LLM on a provider type, with its own credential. Only `llm` changes in place. The create
 * response is the service's persistence record and echoes the submitted key: only the GUID and the linked
 * connection's numeric id are read from it, so the key never reaches outputs, logs or errors.
 *
 * The link to a ProviderConnection is the service's to make, on create only: a Model names a provider type,
 * and the service links it to that type's connection. When the program says which connection it means (one
 * ProviderConnection of the Model's type among its `dependsOn`), the resource class passes that connection's
 * GUID along (`__linkTo`): the create links to exactly it, and a Model whose link is not that connection (it
 * was replaced, or deleted and a refresh saw the link gone) is replaced, since no request re-links a Model.
 */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type ModelCreatedLink, type ModelRecord, modelsApi } from "../api/models";
import { Guid, HttpUrl } from "../api/common";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { defineKind, type Outputs } from "../provider/kind";
import { declaredArg, GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { keyRedactedFailure, providerAdvice } from "../provider/errors";
import { abandonCreate } from "../provider/undo-create";
import { containsUnknown } from "../provider/values";
import * as shim from "../shims/model";

/** The GUID of the connection the program means the Model to be linked to (see the top of this file). */
export const LINK_TO = "__linkTo";

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
  derived: { [LINK_TO]: Guid.optional() },
  // No request re-links a Model: one linked elsewhere than the connection meant (or to none) is made anew.
  replaceWhen: (olds, news) => {
    const meant = news[LINK_TO];
    return meant !== undefined && (containsUnknown(meant) || meant !== olds.providerGuid) ? "providerGuid" : undefined;
  },
  async create(client, inputs) {
    const what = `Cannot create Model "${inputs.llm}" on provider "${inputs.provider}"`;
    // A connection's GUID as `provider` links the Model to exactly that connection.
    const provider = linkOf(inputs) ?? inputs.provider!;
    const body = { llm: inputs.llm!, provider, key: inputs.key!, url: inputs.url, default: inputs.default };
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
      .filter((model) => model.llm === inputs.llm && namesProvider(linkOf(inputs) ?? inputs.provider!, model))
      .map((model) => ({ guid: model.guid, createdAt: model.createdAt }));
  },
  async read(client, guid, state) {
    return toOutputs(await modelsApi.get(client, guid), state);
  },
  async update(client, guid, news, _changed, state) {
    // PUT takes `llm` only, the one updatable field (the only change that reaches update), and answers the public record.
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

const linkOf = (inputs: object): string | undefined => (inputs as Record<string, string | undefined>)[LINK_TO];

/** A ProviderConnection of either class (dynamic or native), by its type token, which holds across copies of the package. */
const CONNECTION_TOKENS = new Set(["pulumi-nodejs:dynamic/gms:ProviderConnection", "gms:index:ProviderConnection"]);

interface ConnectionLike extends pulumi.CustomResource {
  readonly provider: pulumi.Output<string | undefined>;
  readonly guid: pulumi.Output<string>;
}

const isConnection = (resource: unknown): resource is ConnectionLike =>
  pulumi.CustomResource.isInstance(resource) && CONNECTION_TOKENS.has(pulumi.resourceType(resource));

/**
 * The GUID of the one ProviderConnection among `dependsOn` whose provider type is the Model's, or undefined
 * (none, several, a `provider` that is already a GUID, or a `dependsOn` that is not a plain list). A
 * connection counts whichever class declared it: a program moving from one to the other holds both for a while.
 */
export function meantConnection(
  provider: pulumi.Input<string> | undefined,
  dependsOn: pulumi.CustomResourceOptions["dependsOn"],
): pulumi.Output<string | undefined> | undefined {
  const list: unknown[] = Array.isArray(dependsOn) ? dependsOn : [dependsOn];
  const connections = list.filter(isConnection);
  if (connections.length === 0 || provider === undefined) return undefined;
  // The provider type as the program declared the connection: its output is unknown in a preview when the
  // service cannot show it (after an import), which would make every Model that means it look re-linked.
  const types = pulumi.all(
    connections.map((connection) => (declaredArg(connection, "provider") as pulumi.Input<string> | undefined) ?? connection.provider),
  );
  const guids = pulumi.all(connections.map((connection) => connection.guid));
  return pulumi.all([provider, types, guids]).apply(([type, types, guids]) => {
    if (Guid.safeParse(type).success) return undefined;
    const same = guids.filter((_, index) => types[index]?.toLowerCase() === type.toLowerCase());
    return same.length === 1 ? same[0] : undefined;
  });
}

export type ModelArgs = KindArgs<typeof modelKind>;
export interface Model extends KindOutputs<typeof modelKind> {}
export class Model extends GmsResource {
  constructor(name: string, args: ModelArgs, opts?: pulumi.CustomResourceOptions) {
    super(modelKind, shim, name, { ...args, [LINK_TO]: meantConnection(args.provider, opts?.dependsOn) }, opts);
  }
}
