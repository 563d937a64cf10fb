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
 *
 * Its operations are derived from its endpoint entries (src/api/models.ts); its quirks: create sends the link in
 * place of the declared provider, the lookup compares the provider by what a Model shows of it (its type's name,
 * its link), every PUT sends `llm`, a refused create never repeats the key, create reads the public record back
 * (a second call; the Model deleted again when it fails), and read and update keep the declared provider and the
 * connection's numeric id (`toOutputs`).
 */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid, HttpUrl } from "../api/common";
import { ModelCreatedLink, type ModelRecord, modelEndpoints } from "../api/models";
import type { GmsClient } from "../client";
import { keyRedactedFailure, providerAdvice } from "../provider/errors";
import { type InputValues, computed, replaceOnly, updatable } from "../provider/fields";
import type { Outputs } from "../provider/kind";
import { declaredArg, GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import type { providerConnectionKind } from "./provider-connection";
import { Name, described, entryRef, secretSource } from "../provider/workspace-form";
import { abandonCreate } from "../provider/undo-create";
import { containsUnknown } from "../provider/values";
import * as shim from "../shims/model";
import { dynamicToken, nativeToken } from "../provider/tokens";

/** The GUID of the connection the program means the Model to be linked to (see the top of this file). */
export const LINK_TO = "__linkTo";

const label = (inputs: { llm?: string | undefined; provider?: string | undefined }) =>
  `Model "${inputs.llm}" on provider "${inputs.provider}"`;

export const modelKind = restKind(
  {
    name: "Model",
    description:
      "A Model of the workspace: an LLM on a provider type, with its own credential. The service " +
      "links it to the workspace's ProviderConnection of the same type, if there is one.",
    quirks: [
      "Only `llm` changes in place; everything else replaces the Model.",
      "The service's create answer echoes the key: the provider never logs it or keeps it outside the secret input.",
    ],
    workspaceSection: "Models, by logical name; each uses a ProviderConnection declared here.",
    identity: [["provider", "llm"]],
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
    workspace: {
      form: (inputs) => ({
        provider: entryRef(
          "ProviderConnection",
          Name.describe(
            "The logical name of the ProviderConnection (under `providerConnections`) the Model " +
              "uses: its provider type, key and endpoint apply, and the Model is created after it.",
          ),
        ),
        key: secretSource(
          inputs.key,
          "A credential of the Model's own, instead of the ProviderConnection's: `{ config: <key> }` or `{ env: <VARIABLE> }`.",
        ).optional(),
        url: described(
          inputs.url,
          "The provider endpoint (http or https), or null for the provider's default; when left out, the ProviderConnection's.",
        ),
      }),
      toArgs: (key, entry, context) => {
        // The ProviderConnection's entry, which the document's check found declared.
        const connection = context.entry("ProviderConnection", entry.provider) as Pick<
          InputValues<typeof providerConnectionKind.inputs>,
          "provider" | "url"
        >;
        const { provider: _logical, key: _secret, url, ...fields } = entry;
        return {
          args: {
            ...fields,
            provider: connection.provider!,
            key: context.secret("Model", key, "key") ?? context.secret("ProviderConnection", entry.provider, "key")!,
            url: url !== undefined ? url : connection.url,
          },
          after: [context.child("ProviderConnection", entry.provider)],
        };
      },
    },
    derived: { [LINK_TO]: Guid.optional() },
    // No request re-links a Model: one linked elsewhere than the connection meant (or to none) is made anew.
    replaceWhen: (olds, news) => {
      const meant = news[LINK_TO];
      return meant !== undefined && (containsUnknown(meant) || meant !== olds.providerGuid) ? "providerGuid" : undefined;
    },
  },
  // The create's answer echoes the key: only the GUID and the linked connection's numeric id are read of it.
  { ...modelEndpoints, create: { ...modelEndpoints.create, response: ModelCreatedLink } },
  {
    label,
    matchOn: ["llm", "provider"],
    // A connection's GUID as `provider` links the Model to exactly that connection.
    sent: (inputs) => ({ provider: linkOf(inputs) ?? inputs.provider }),
    // Models show the provider as a type name and a linked connection, not as create sent it.
    narrow: async (_client, models, values) => models.filter((model) => namesProvider(values.provider!, model as ModelRecord)),
    // The only field PUT accepts, and it requires it.
    alwaysSent: ["llm"],
    async explain(_client, error, operation, inputs) {
      if (operation === "update") return error;
      return keyRedactedFailure(inputs.key, `Cannot create ${label(inputs)}`, error, providerAdvice(error, inputs.url));
    },
    overrides: (derived) => {
      const read = async (client: GmsClient, guid: string, state: Outputs) =>
        toOutputs((await derived.read(client, guid, state)) as ModelRecord, state);
      return {
        async create(client, inputs) {
          const created = await derived.create(client, inputs);
          // The create response has no provider name or linked connection GUID: read the public record.
          const linked = { workspaceModelProviderId: (created.workspaceModelProviderId as number | null | undefined) ?? undefined };
          const guid = created.guid as string;
          try {
            return { ...(await read(client, guid, inputs)), ...linked };
          } catch (error) {
            return abandonCreate({
              remove: () => derived.delete(client, guid, {}),
              kindLabel: "Model",
              guid,
              message: keyRedactedFailure(inputs.key, `Cannot create ${label(inputs)}: reading the new Model back failed`, error).message,
              record: { guid, llm: inputs.llm, provider: inputs.provider, default: inputs.default, ...linked },
            });
          }
        },
        read,
        // PUT answers the public record.
        update: async (client, guid, news, changed, state) =>
          toOutputs((await derived.update(client, guid, news, changed, state)) as ModelRecord, state),
      };
    },
  },
);

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
const CONNECTION_TOKENS = new Set([dynamicToken("ProviderConnection"), nativeToken("ProviderConnection")]);

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
