/**
 * Every object of every kind in the workspace the client's key selects. Each kind is listed where its declaration
 * says (`Kind.listing`: the entries its lost-create lookup lists, so no route is written twice): the workspace's
 * whole collection where the API has one, else its list under each parent (every App for Workflows and fine-tunes,
 * every Context for Context Sources).
 */
import { workspacesApi } from "../api/workspaces";
import type { GmsClient } from "../client";
import { type KindListing, type Outputs } from "../provider/kind";
import { KIND_NAMES, type KindName, kinds } from "../resources";
import { listed } from "../provider/rest";

export interface ListedObject {
  kind: KindName;
  guid: string;
  /** What the service calls it: its name, else its nickname (a connection), else its `llm` (a Model). */
  name: string;
  /** The record as the list answers it, in the package's names. */
  record: Outputs;
}

/** The record fields that name an object, in the order they are looked for. */
const NAME_FIELDS = ["name", "nickname", "llm"] as const;

const nameOf = (kind: KindName, record: Outputs): string => {
  for (const field of NAME_FIELDS) {
    const value = record[field];
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return kind;
};

function listingOf(kind: KindName): KindListing {
  const listing = kinds[kind].listing;
  if (!listing) throw new TypeError(`the ${kind} kind declares no listing`);
  return listing;
}

/** Where a list runs: with no parameters, or once under each parent. */
const parentInputOf = (listing: KindListing): string | undefined => {
  if (listing.whole) return undefined;
  const inputs = Object.values(listing.by);
  if (inputs.length > 1) throw new TypeError(`a list under ${inputs.join(" and ")} at once is not supported`);
  return inputs[0];
};

/**
 * The GUIDs of the parents a per-parent list runs under, by the input that holds the parent's GUID: the Apps already
 * listed, or the workspace's Contexts (a lookup: Contexts are not created through the public interface).
 */
async function parentsOf(client: GmsClient, input: string, apps: ListedObject[]): Promise<string[]> {
  if (input === "app") return apps.map((app) => app.guid);
  if (input === "context") return (await workspacesApi.currentContexts(client)).map((context) => context.guid);
  throw new TypeError(`objects listed under their ${input} cannot be listed: no list of such parents is known`);
}

async function listKind(client: GmsClient, kind: KindName, apps: ListedObject[]): Promise<ListedObject[]> {
  const listing = listingOf(kind);
  const input = parentInputOf(listing);
  const objects = (records: unknown[]) =>
    (records as Outputs[]).map((record) => ({ kind, guid: record.guid as string, name: nameOf(kind, record), record }));
  if (input === undefined) return objects(await listed(client, listing.whole ?? listing.list, {}));
  const [param] = Object.keys(listing.by) as [string];
  const parents = await parentsOf(client, input, apps);
  const pages = await Promise.all(parents.map((guid) => listed(client, listing.list, { [param]: guid })));
  return objects(pages.flat());
}

/** Every object of every kind, kind by kind in `KIND_NAMES` order, each kind in the order its list answers. */
export async function listWorkspace(client: GmsClient): Promise<ListedObject[]> {
  const underParent = (kind: KindName) => parentInputOf(listingOf(kind)) !== undefined;
  // Kinds listed whole first: the per-App lists need the Apps.
  const whole = await Promise.all(KIND_NAMES.filter((kind) => !underParent(kind)).map((kind) => listKind(client, kind, [])));
  const apps = whole.flat().filter((object) => object.kind === "App");
  const parented = await Promise.all(KIND_NAMES.filter(underParent).map((kind) => listKind(client, kind, apps)));
  const all = [...whole, ...parented].flat();
  return KIND_NAMES.flatMap((kind) => all.filter((object) => object.kind === kind));
}
