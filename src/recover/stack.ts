/**
 * A stack as `pulumi-gms recover` reads it: two exports of one checkpoint. `pulumi stack export --show-secrets` is
 * held in memory only, for what the lookups need (identifying fields, which a program may have made secret, and the
 * connection or provider configuration, whose API key is); the plain export, its secrets the CLI's ciphertext, is
 * the one recover changes and imports back, so that no secret is ever written out in plaintext, nor handed back to
 * the CLI. The checkpoint's pending operations carry each resource's URN, type, provider reference and inputs; its
 * manifest's time is the interrupted run's last write of it.
 */
import { parseStackExport, type StackExport, type StateResource } from "../migrate/stack-export";
import type { LockHolder } from "./lock";
import { KIND_NAMES, type KindName } from "../resources";
import { kindOfDynamicToken, nameOfNativeToken } from "../provider/tokens";
import { isSecret } from "../provider/values";

/** A resource of an export, with the reference to its provider (`<provider URN>::<provider id>`). */
export interface StackResource extends StateResource {
  provider?: string;
}

/** A pending create of a gms resource, native (`gms:index:<Kind>`) or dynamic (`pulumi-nodejs:dynamic/gms:<Kind>`). */
export interface PendingCreate {
  urn: string;
  type: string;
  kind: KindName;
  /** The inputs the create was sent with, secrets revealed: memory only, never printed. */
  inputs: Record<string, unknown>;
  /** The reference to the provider that served it. */
  provider: string | undefined;
  /** The id of the stack's resource that has this URN already (a later run made it), if one has. */
  heldAs: string | undefined;
}

/** A pending operation recover does not look anything up for: cleared by the import; its resource refreshed when the stack holds it. */
export interface OtherOperation {
  urn: string;
  type: string;
  /** `updating`, `deleting`, `reading`, ..., or `creating` of a provider or a component (no object to find). */
  operation: string;
  /** Whether the stack holds a resource of this URN (what a refresh can read). */
  inState: boolean;
}

export interface StackReading {
  stack: string;
  /** The interrupted run's last write of the checkpoint (this machine's milliseconds, as the manifest's time says). */
  lastWriteAt: number | undefined;
  /** Every id the stack's resources hold. */
  heldIds: Set<string>;
  pendingCreates: PendingCreate[];
  /** Pending creates of other packages' custom resources: recover knows no lookup for them. */
  foreignCreates: { urn: string; type: string }[];
  otherOperations: OtherOperation[];
  /** Every string inside a secret of the stack: blanked from everything recover prints. */
  secrets: string[];
  /** The provider resource a reference names, with its inputs revealed (memory only). */
  providerOf(reference: string | undefined): { type: string; inputs: Record<string, unknown> } | undefined;
  /** The plain export (secrets sealed), which recover changes and imports. */
  sealed: StackExport;
  /** That export's text, as the CLI gave it: the stack must still be this when recover imports (./apply.ts). */
  sealedText: string;
}

export class RecoverError extends Error {
  override readonly name = "RecoverError";
}

/**
 * Another run has the stack: the CLI refused the import for a lock recover may not release (`holders`), or the stack
 * changed while recover read it or before it imported (no holder known). Recover changed nothing then (or says what).
 */
export class StackUnderwayError extends RecoverError {
  readonly holders: LockHolder[];
  constructor(message: string, holders: LockHolder[], options?: { cause: unknown }) {
    super(message, options);
    this.holders = holders;
  }
}

/** A value of the revealed export with each secret replaced by what it holds; `secrets` collects every string inside one. */
function revealed(value: unknown, secrets: string[]): unknown {
  if (isSecret(value)) {
    if (typeof value.plaintext !== "string")
      throw new RecoverError("`pulumi stack export --show-secrets` left a secret sealed: the stack's secrets cannot be decrypted here");
    const inner = revealed(JSON.parse(value.plaintext), secrets);
    secrets.push(...stringsIn(inner));
    return inner;
  }
  if (Array.isArray(value)) return value.map((item) => revealed(item, secrets));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, revealed(item, secrets)]));
  return value;
}

const stringsIn = (value: unknown): string[] =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsIn)
      : value && typeof value === "object"
        ? Object.values(value).flatMap(stringsIn)
        : [];

/** The gms kind of a resource type, native or dynamic; undefined for any other type. */
export function gmsKindOf(type: string): KindName | undefined {
  const name = nameOfNativeToken(type) ?? kindOfDynamicToken(type);
  return name !== undefined && (KIND_NAMES as readonly string[]).includes(name) ? (name as KindName) : undefined;
}

/** What a signature of the stack's contents is made of: its resources and pending operations, by URN. */
const shape = (exported: StackExport): string =>
  JSON.stringify([
    (exported.deployment.resources ?? []).map((resource) => [resource.urn, resource.id ?? null]),
    (exported.deployment.pending_operations ?? []).map((operation) => [operation.type, operation.resource.urn]),
  ]);

/** Reads the two exports of stack `stack`: `revealedText` with `--show-secrets`, `sealedText` without. */
export function readStack(stack: string, revealedText: string, sealedText: string): StackReading {
  const sealed = parseStackExport(sealedText, `the export of stack ${stack}`);
  const plain = parseStackExport(revealedText, `the export of stack ${stack} (--show-secrets)`);
  if (shape(sealed) !== shape(plain))
    throw new StackUnderwayError(`stack ${stack} changed between two exports of it: a run is under way; run recover once it has ended`, []);
  const secrets: string[] = [];
  const deployment = revealed(plain.deployment, secrets) as StackExport["deployment"];
  const resources = (deployment.resources ?? []) as StackResource[];
  const live = resources.filter((resource) => !resource.delete);
  const heldIds = new Set(resources.flatMap((resource) => (resource.id ? [resource.id] : [])));
  const pendingCreates: PendingCreate[] = [];
  const foreignCreates: StackReading["foreignCreates"] = [];
  const otherOperations: OtherOperation[] = [];
  for (const { type: operation, resource } of deployment.pending_operations ?? []) {
    const { urn, type } = resource;
    const inState = live.some((each) => each.urn === urn);
    const kind = gmsKindOf(type);
    const lookedFor = operation === "creating" && resource.custom !== false && !type.startsWith("pulumi:providers:");
    if (lookedFor && kind) {
      pendingCreates.push({
        urn,
        type,
        kind,
        inputs: resource.inputs ?? {},
        provider: (resource as StackResource).provider,
        heldAs: live.find((each) => each.urn === urn)?.id,
      });
    } else if (lookedFor) foreignCreates.push({ urn, type });
    else otherOperations.push({ urn, type, operation, inState });
  }
  const time = (deployment.manifest as { time?: unknown } | undefined)?.time;
  const lastWriteAt = typeof time === "string" ? Date.parse(time) : Number.NaN;
  return {
    stack,
    lastWriteAt: Number.isNaN(lastWriteAt) ? undefined : lastWriteAt,
    heldIds,
    pendingCreates,
    foreignCreates,
    otherOperations,
    secrets: [...new Set(secrets)].filter((secret) => secret !== ""),
    providerOf(reference) {
      if (!reference) return undefined;
      const at = reference.lastIndexOf("::");
      const [urn, id] = at === -1 ? [reference, undefined] : [reference.slice(0, at), reference.slice(at + 2)];
      const found = live.find((each) => each.urn === urn && (id === undefined || each.id === id)) ?? live.find((each) => each.urn === urn);
      return found ? { type: found.type, inputs: found.inputs ?? {} } : undefined;
    },
    sealed,
    sealedText,
  };
}
