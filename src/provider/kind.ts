/**
 * What a resource kind declares: its fields and the four API operations. The generic provider in
 * `./provider` turns a Kind into the Pulumi dynamic-provider contract.
 */
import type { z } from "zod";
import type { Endpoint } from "../api/endpoint";
import type { CreatedCandidate, GmsClient } from "../client";
import type { InputFields, InputValues, OutputFields } from "./fields";
import type { DocumentForm, KindWorkspace } from "./workspace-form";

/**
 * Inputs only the dynamic resources take: an existing object to adopt, since the engine cannot import a dynamic
 * resource. On the provider plugin the `import` resource option and `pulumi import` do that, so its schema (and every
 * SDK made from it) leaves these out, and its Check refuses them.
 */
export const DYNAMIC_ONLY_INPUTS = ["adopt"] as const;
export type DynamicOnlyInput = (typeof DYNAMIC_ONLY_INPUTS)[number];

/** Inputs every kind accepts besides its own fields: where its calls go, and (dynamic resources) an object to adopt. */
export const COMMON_INPUTS = ["connection", ...DYNAMIC_ONLY_INPUTS] as const;

/** A record as the provider stores it: camelCase, the kind's readable inputs plus its computed outputs. */
export type Outputs = Record<string, unknown>;

export interface CheckFailure {
  property: string;
  reason: string;
}

/**
 * Where a kind's objects are listed, as its endpoint entries declare it: what the lost-create lookup lists, and what
 * `pulumi-gms discover` lists every object of the kind from.
 */
export interface KindListing {
  /** The collection, under a parent when its path has parameters. */
  list: Endpoint;
  /** The workspace's whole collection, where the API has one beside the per-parent `list`. */
  whole?: Endpoint;
  /** Each path parameter of `list`, by the input that holds the parent's GUID: `{ guid: "app" }` lists `/apps/{guid}/workflows`. */
  by: Readonly<Record<string, string>>;
}

export interface Kind<
  I extends InputFields = InputFields,
  O extends OutputFields = OutputFields,
  N extends string = string,
  D extends DocumentForm<I> = DocumentForm<I>,
> {
  /** Its name, the key of its line in the registry of kinds (src/resources/index.ts). */
  name: N;
  description: string;
  /**
   * The kind is on its way out: what to use instead. schema.json carries it as the resource's `deprecationMessage`,
   * its reference page shows it, and a program that declares one is warned (./deprecation.ts).
   */
  deprecated?: string;
  /**
   * The names the kind had before a rename, oldest first. Their type tokens (`gms:index:<name>`, and the dynamic
   * resources' `pulumi-nodejs:dynamic/gms:<name>`) stay aliases of the kind's: schema.json lists them (the SDKs
   * generated from it pass them), the classes of this package pass them, and the plugin serves the old tokens, so a
   * stack that holds a resource of the old type keeps its object. A dynamic resource's state names the shim module
   * of its kind's name then (`pulumi-gms/dist/shims/<old-name>.js`): keep a shim of that path for the renamed kind.
   */
  formerNames?: readonly string[];
  /**
   * What a user of the kind meets because the service behaves so (docs/kinds/<kind>.md, "As the service has it"): a
   * sentence each, in the words of what happens and what to do about it.
   */
  quirks?: readonly string[];
  /**
   * What an object of the kind takes with it when a program deletes it that no program can make again: `pulumi-gms
   * discover` names it beside every object of the kind it imports.
   */
  lostOnDelete?: string;
  /**
   * What the kind's map in the workspace document holds (its description in workspace.schema.json): the map is named
   * after the kind, `<kind in camelCase>s` (`fineTunes`), by logical name (src/workspace/spec.ts).
   */
  workspaceSection: string;
  /**
   * Its entry in the workspace document where that is not its inputs as they are (references to other entries by
   * logical name, secrets by source, files by path), and how such an entry becomes its child's args
   * (./workspace-form.ts). Without it the entry is the kind's inputs, and its child's args.
   */
  workspace?: KindWorkspace<I, D>;
  inputs: I;
  outputs: O;
  /**
   * The fields that identify an object of the kind to the service, each list one identity (a ProviderConnection has
   * two: its name, and its nickname; `restKind` checks that each is an input): two resources of one program with the same values are twins, warned about
   * (./identity.ts). Empty for a kind whose objects nothing looks up by a field.
   */
  identity: readonly (readonly string[])[];
  /** Where its objects are listed (`restKind` sets it from the entries it derives the operations from). */
  listing?: KindListing;
  /** Rules that span fields (the zod schemas check one field each). Only called when every value is known. */
  validate?(inputs: InputValues<I>): CheckFailure[];
  /**
   * Inputs the resource class derives rather than the program declares (names start with `__`): checked and
   * passed to create, never compared on their own, so that a program that did not have them before sees no diff.
   */
  derived?: Record<string, z.ZodType>;
  /**
   * Whether the stored object must be replaced whatever the program declares changed (a state it never leaves,
   * such as a failed job, or a link the service shows that is not the one the inputs ask for): the output that
   * says so, which diff lists in `replaces`; undefined otherwise.
   */
  replaceWhen?(olds: Outputs, news: Outputs): string | undefined;
  /**
   * Creates the object, its POST through `client.create` so that a lost answer is looked up, not
   * replayed. It leaves nothing behind when it throws, except through a `MayExistError`.
   */
  create(client: GmsClient, inputs: InputValues<I>): Promise<Outputs>;
  /**
   * The live objects that match `inputs` (what the create's POST sends), with their creation times: how
   * a create whose answer was lost, now or in an earlier run, finds the object it made.
   */
  findCreated(client: GmsClient, inputs: InputValues<I>): Promise<CreatedCandidate[]>;
  /** The live object (a NotFoundError means it is gone). `state` is the last stored outputs. */
  read(client: GmsClient, guid: string, state: Outputs): Promise<Outputs>;
  /** Applies the changed updatable fields; sends only what the API accepts for the kind. */
  update(client: GmsClient, guid: string, news: InputValues<I>, changed: ReadonlySet<keyof I & string>, state: Outputs): Promise<Outputs>;
  /** Deletes the object; a NotFoundError is treated as already gone by the caller. */
  delete(client: GmsClient, guid: string, state: Outputs): Promise<void>;
}
