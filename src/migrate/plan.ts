/**
 * The move of a stack from the dynamic gms resources (`pulumi-nodejs:dynamic/gms:<Kind>`) to the native ones
 * (`gms:index:<Kind>`, served by the `gms` provider plugin) without recreating any object, planned from a
 * stack export:
 * - an import file for `pulumi import --file`, one entry per dynamic gms resource, with the native type, the
 *   same logical name and parent (so the native URN differs from the dynamic one only in its type), the id the
 *   native provider's Read takes (the object's GUID, see `./import-id`), and the resource's recorded inputs, those the native
 *   schema declares, as state holds them (secrets as the stack's ciphertext). The engine fills from them what
 *   a Read cannot return (write-only keys, `connection`), so the imported state is what the program declares.
 *   A resource with its own `connection` also carries its recorded outputs: the engine then takes them instead
 *   of reading, since the native provider's Read would look with the stack's `gms:baseUrl`/`gms:apiKey`;
 * - the dynamic URNs to remove from state once the import succeeded, dependents first (`pulumi state delete`
 *   refuses to remove a resource that another depends on or is parented to).
 * A resource the engine has not settled (a lost create's placeholder, a partially created one, one pending
 * deletion or replacement, one read with `get`) stays dynamic, with every gms resource it depends on, and so
 * does a gms resource that a resource outside the migration depends on: removing it from state would fail.
 * The plan never holds a secret's value: an export made with `--show-secrets` is refused.
 */
import { KIND_NAMES, type KindName } from "../resources";
import { isIncomplete, isPlaceholder } from "../provider/unsettled";
import { MigrationError } from "./errors";
import { importIdOf } from "./import-id";
import { type NativeSchema, packageNativeSchema } from "./native-schema";
import { dependenciesOf, type StackExport, type StateResource, urnParts } from "./stack-export";
import { dynamicToken, kindOfDynamicToken } from "../provider/tokens";
import { isSecret } from "../provider/values";

/** One entry of Pulumi's bulk import file (`pulumi import --file`). */
export interface ImportEntry {
  type: string;
  /** The entry's handle in the file (what `parent` refers to); the resource's name unless `logicalName` is given. */
  name: string;
  logicalName?: string;
  id: string;
  /** The handle of another entry, or a key of `nameTable`. */
  parent?: string;
  version?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

export interface ImportFile {
  nameTable?: Record<string, string>;
  resources: ImportEntry[];
}

export interface MigratedResource {
  kind: KindName;
  /** The dynamic resource's URN, which the delete script removes. */
  urn: string;
  /** The URN `pulumi import` gives the native resource. */
  nativeUrn: string;
  importId: string;
  protect: boolean;
  /** The entry carries the recorded outputs, so the import does not read the object. */
  outputsSupplied: boolean;
}

export interface DeferredResource {
  kind: KindName;
  urn: string;
  reason: string;
}

export interface MigrationPlan {
  importFile: ImportFile;
  /** In the import file's order: parents and dependencies before what refers to them. */
  migrated: MigratedResource[];
  /** The dynamic URNs to remove from state after the import, dependents first. */
  deleteOrder: string[];
  /** The gms resources left dynamic, each with why. */
  deferred: DeferredResource[];
  /** What the user should know besides (pending operations, protected resources, supplied outputs). */
  notes: string[];
}

export interface PlanOptions {
  /** Where the export came from, for the messages. */
  source?: string;
  /** The native kinds (default: the package's `schema.json`). */
  schema?: NativeSchema;
  /** The `gms` plugin version each entry asks for (`version`); left out, the engine's default provider picks. */
  pluginVersion?: string;
  /** Every entry carries its recorded outputs, so `pulumi import` reads nothing from the service. */
  withOutputs?: boolean;
}

const ROOT_STACK_TYPE = "pulumi:pulumi:Stack";

const kindOf = (resource: StateResource): string | undefined => kindOfDynamicToken(resource.type);
const isKindName = (name: string): name is KindName => (KIND_NAMES as readonly string[]).includes(name);

/** Why the engine has not settled `resource`, or undefined when it has. */
function unsettled(resource: StateResource): string | undefined {
  if (resource.delete) return "pending deletion (a replaced object): the next `pulumi up` deletes it; run it, then export again";
  if (resource.pendingReplacement)
    return "pending replacement: an interrupted `pulumi up` deleted it before creating its replacement; run `pulumi up`, then export again";
  if (resource.external) return "read with `get`, not managed by the stack";
  if (!resource.id || isPlaceholder(resource.id, resource.outputs))
    return "a placeholder of a create whose answer was lost: `pulumi refresh` adopts its object or forgets it; then export again";
  if (isIncomplete(resource.outputs) || (resource.initErrors?.length ?? 0) > 0)
    return "partially created (incomplete): `pulumi up` replaces it, or `pulumi refresh` reads it whole; then export again";
  return undefined;
}

/** The named properties of `values` that `names` holds, or undefined when there are none. */
function pick(values: Record<string, unknown> | undefined, names: ReadonlySet<string>): Record<string, unknown> | undefined {
  const picked = Object.entries(values ?? {}).filter(([name, value]) => names.has(name) && value !== undefined);
  return picked.length > 0 ? Object.fromEntries(picked) : undefined;
}

/** The paths under `value` of secrets shown in plaintext (`--show-secrets`). */
function plaintextSecrets(value: unknown, path: string): string[] {
  // A secret as state keeps it: `ciphertext`, or `plaintext` in an export made with `--show-secrets`.
  if (isSecret(value)) return "plaintext" in value ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => plaintextSecrets(item, `${path}[${index}]`));
  if (value !== null && typeof value === "object")
    return Object.entries(value).flatMap(([key, item]) => plaintextSecrets(item, `${path}.${key}`));
  return [];
}

/** A name not in `taken`: `base`, else `base-<kind>`, else numbered. */
function uniqueName(base: string, kind: string, taken: Set<string>): string {
  let name = base;
  for (let counter = 1; taken.has(name); counter++) name = counter === 1 ? `${base}-${kind}` : `${base}-${kind}-${counter}`;
  taken.add(name);
  return name;
}

export function planMigration(exported: StackExport, options: PlanOptions = {}): MigrationPlan {
  const source = options.source ?? "the stack export";
  const resources = exported.deployment.resources ?? [];
  const gms = resources.filter((resource) => kindOf(resource) !== undefined);
  if (gms.length === 0)
    throw new MigrationError(
      "NO_GMS_RESOURCES",
      `${source} holds ${resources.length} resource(s), none of them a dynamic gms resource ` +
        `(type ${dynamicToken("<Kind>")}): there is nothing to migrate.`,
    );
  const unknown = gms.filter((resource) => !isKindName(kindOf(resource)!));
  if (unknown.length > 0)
    throw new MigrationError(
      "UNKNOWN_KIND",
      `${source} holds dynamic gms resources of a kind this package does not know: ${unknown
        .map((resource) => `${resource.urn} (kind ${kindOf(resource)})`)
        .join(", ")}. Known kinds: ${KIND_NAMES.join(", ")}.`,
    );
  const schema = options.schema ?? packageNativeSchema();
  const kind = (resource: StateResource) => kindOf(resource) as KindName;

  // What stays dynamic, and why: the unsettled, then whatever their staying (or anything else's) keeps in state.
  const reasons = new Map<StateResource, string>();
  for (const resource of gms) {
    const reason = unsettled(resource);
    if (reason !== undefined) reasons.set(resource, reason);
  }
  const migrating = new Set(gms.filter((resource) => !reasons.has(resource)));
  const byUrn = new Map<string, StateResource[]>();
  for (const resource of resources) byUrn.set(resource.urn, [...(byUrn.get(resource.urn) ?? []), resource]);
  const stays = (resource: StateResource) => (kindOf(resource) !== undefined ? `${resource.urn}, which stays dynamic,` : resource.urn);
  for (let changed = true; changed; ) {
    changed = false;
    for (const staying of resources) {
      if (migrating.has(staying)) continue;
      for (const urn of new Set(dependenciesOf(staying)))
        for (const dependency of byUrn.get(urn) ?? [])
          if (migrating.delete(dependency)) {
            reasons.set(
              dependency,
              `${stays(staying)} depends on it, and \`pulumi state delete\` refuses to remove what another resource depends on`,
            );
            changed = true;
          }
      for (const twin of byUrn.get(staying.urn) ?? [])
        if (migrating.delete(twin)) {
          reasons.set(twin, "another entry of the same URN stays in state, and `pulumi state delete` could not tell the two apart");
          changed = true;
        }
    }
    // A child of a gms parent that stays stays too: its native URN would hold the dynamic parent's type, and
    // that parent could never leave state under a native child.
    for (const child of [...migrating])
      if ((byUrn.get(child.parent ?? "") ?? []).some((parent) => kindOf(parent) !== undefined && !migrating.has(parent))) {
        migrating.delete(child);
        reasons.set(child, `its parent ${child.parent} stays dynamic; a native child would keep it in state`);
        changed = true;
      }
  }

  // The import file, in state's order: Pulumi keeps every resource after its parent and its dependencies.
  const ordered = resources.filter((resource) => migrating.has(resource));
  const taken = new Set<string>();
  const handles = new Map(ordered.map((resource) => [resource, uniqueName(urnParts(resource.urn).name, kind(resource), taken)]));
  const migratingByUrn = new Map(ordered.map((resource) => [resource.urn, resource]));
  const nameTable: Record<string, string> = {};
  const tableNames = new Map<string, string>();
  const qualifiedTypes = new Map<StateResource, string>();
  const entries: ImportEntry[] = [];
  const migrated: MigratedResource[] = [];
  const exposed: string[] = [];
  const notes: string[] = [];
  for (const resource of ordered) {
    const native = schema[kind(resource)];
    const parts = urnParts(resource.urn);
    let parent: string | undefined;
    let parentType: string | undefined;
    if (resource.parent && urnParts(resource.parent).qualifiedType !== ROOT_STACK_TYPE) {
      const migratingParent = migratingByUrn.get(resource.parent);
      if (migratingParent) {
        parent = handles.get(migratingParent)!;
        parentType = qualifiedTypes.get(migratingParent)!;
      } else {
        const parentParts = urnParts(resource.parent);
        parent = tableNames.get(resource.parent) ?? uniqueName(parentParts.name, "parent", taken);
        tableNames.set(resource.parent, parent);
        nameTable[parent] = resource.parent;
        parentType = parentParts.qualifiedType;
      }
    }
    const qualifiedType = parentType ? `${parentType}$${native.type}` : native.type;
    qualifiedTypes.set(resource, qualifiedType);
    const inputs = pick(resource.inputs, native.inputs);
    const ownConnection = resource.inputs?.connection !== undefined;
    const outputs = options.withOutputs || ownConnection ? pick(resource.outputs, native.outputs) : undefined;
    for (const [where, values] of [
      ["inputs", inputs],
      ["outputs", outputs],
    ] as const) {
      for (const [name, value] of Object.entries(values ?? {})) {
        const paths = plaintextSecrets(value, `${where}.${name}`);
        if (native.secrets.has(name) && !isSecret(value) && value !== null) paths.push(`${where}.${name}`);
        exposed.push(...paths.map((path) => `${resource.urn} ${path}`));
      }
    }
    const handle = handles.get(resource)!;
    const importId = importIdOf(resource);
    entries.push({
      type: native.type,
      name: handle,
      ...(handle !== parts.name ? { logicalName: parts.name } : {}),
      id: importId,
      ...(parent ? { parent } : {}),
      ...(options.pluginVersion ? { version: options.pluginVersion } : {}),
      ...(inputs ? { inputs } : {}),
      ...(outputs ? { outputs } : {}),
    });
    migrated.push({
      kind: kind(resource),
      urn: resource.urn,
      nativeUrn: `urn:pulumi:${parts.stack}::${parts.project}::${qualifiedType}::${parts.name}`,
      importId,
      protect: resource.protect === true,
      outputsSupplied: outputs !== undefined,
    });
    if (ownConnection && !options.withOutputs)
      notes.push(
        `${resource.urn} has its own \`connection\`: its entry carries its recorded outputs, which the import takes as they are ` +
          "(the native provider would read it with the stack's gms:baseUrl and gms:apiKey); `pulumi refresh` reads it afterwards.",
      );
    if (resource.protect)
      notes.push(
        `${resource.urn} is protected: the delete script removes it with --force; give the native resource \`protect: true\` in the program.`,
      );
  }
  if (exposed.length > 0)
    throw new MigrationError(
      "PLAINTEXT_SECRETS",
      `${source} shows secret values in plaintext (made with \`pulumi stack export --show-secrets\`, or stored unencrypted): ` +
        `${exposed.join(", ")}. Export the stack without --show-secrets: the import file then carries them encrypted, as the stack does, ` +
        "and this command never writes a secret's value.",
    );

  for (const operation of exported.deployment.pending_operations ?? [])
    if (operation.resource && kindOf(operation.resource) !== undefined)
      notes.push(
        `${operation.resource.urn}: an interrupted run left a pending \`${operation.type}\` operation, so its object may exist outside state; ` +
          'it is not migrated (see the README, "Re-running converges").',
      );

  return {
    importFile: { ...(Object.keys(nameTable).length > 0 ? { nameTable } : {}), resources: entries },
    migrated,
    deleteOrder: migrated.map((resource) => resource.urn).reverse(),
    deferred: gms
      .filter((resource) => reasons.has(resource))
      .map((resource) => ({ kind: kind(resource), urn: resource.urn, reason: reasons.get(resource)! })),
    notes,
  };
}
