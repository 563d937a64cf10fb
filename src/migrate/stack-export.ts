/**
 * What `pulumi stack export` writes (version 3), as far as a migration reads it, and the URN's parts. The
 * shape is Pulumi's `apitype.UntypedDeployment` holding a `DeploymentV3`; secret values are objects marked
 * with Pulumi's signature key, holding `ciphertext` (or `plaintext` under `--show-secrets`).
 */
import { MigrationError } from "./errors";

/** Pulumi's signature key, and its value for a secret. */

export interface StateResource {
  urn: string;
  type: string;
  custom?: boolean;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  parent?: string;
  dependencies?: string[];
  propertyDependencies?: Record<string, string[]>;
  deletedWith?: string;
  protect?: boolean;
  external?: boolean;
  delete?: boolean;
  pendingReplacement?: boolean;
  initErrors?: string[];
}

export interface PendingOperation {
  resource: StateResource;
  type: string;
}

export interface Deployment {
  manifest?: unknown;
  secrets_providers?: unknown;
  resources?: StateResource[];
  pending_operations?: PendingOperation[];
}

export interface StackExport {
  version: number;
  deployment: Deployment;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Reads the text of a stack export. `source` names where it came from in the errors, which say what the text
 * is instead (not JSON, a checkpoint file, another version) without quoting it.
 */
export function parseStackExport(text: string, source: string): StackExport {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new MigrationError(
      "NOT_AN_EXPORT",
      `${source} is not a Pulumi stack export: it is not JSON (${(error as Error).message}). Make one with \`pulumi stack export --file stack.json\`.`,
    );
  }
  if (!isObject(parsed))
    throw new MigrationError("NOT_AN_EXPORT", `${source} is not a Pulumi stack export: it holds JSON, but not an object.`);
  if (isObject(parsed.checkpoint))
    throw new MigrationError(
      "NOT_AN_EXPORT",
      `${source} is a checkpoint file of a backend, not a stack export: give the output of \`pulumi stack export\` instead.`,
    );
  if (!isObject(parsed.deployment))
    throw new MigrationError(
      "NOT_AN_EXPORT",
      `${source} is not a Pulumi stack export: it has no \`deployment\` object. Make one with \`pulumi stack export --file stack.json\`.`,
    );
  if (parsed.version !== 3)
    throw new MigrationError(
      "NOT_AN_EXPORT",
      `${source} is a stack export of version ${JSON.stringify(parsed.version)}; this command reads version 3, what the Pulumi CLI writes since v3.`,
    );
  const resources = parsed.deployment.resources ?? [];
  if (!Array.isArray(resources))
    throw new MigrationError("NOT_AN_EXPORT", `${source} is not a Pulumi stack export: \`deployment.resources\` is not a list.`);
  resources.forEach((resource, index) => {
    if (!isObject(resource) || typeof resource.urn !== "string" || typeof resource.type !== "string")
      throw new MigrationError(
        "NOT_AN_EXPORT",
        `${source} is not a Pulumi stack export: resource ${index} of \`deployment.resources\` has no \`urn\` and \`type\`.`,
      );
  });
  return parsed as unknown as StackExport;
}

export interface UrnParts {
  stack: string;
  project: string;
  /** The type with its parents' types, `$`-joined (`gms:index:Workspace$pulumi-nodejs:dynamic/gms:App`). */
  qualifiedType: string;
  name: string;
}

/** The parts of `urn:pulumi:<stack>::<project>::<qualified type>::<name>` (the name may itself hold `::`). */
export function urnParts(urn: string): UrnParts {
  const prefix = "urn:pulumi:";
  const parts = urn.startsWith(prefix) ? urn.slice(prefix.length).split("::") : [];
  if (parts.length < 4) throw new MigrationError("NOT_AN_EXPORT", `${urn} is not a Pulumi URN`);
  const [stack, project, qualifiedType, ...name] = parts as [string, string, string, ...string[]];
  return { stack, project, qualifiedType, name: name.join("::") };
}

export const urnOf = (parts: UrnParts): string => `urn:pulumi:${parts.stack}::${parts.project}::${parts.qualifiedType}::${parts.name}`;

/** The URNs a resource depends on in Pulumi's sense: what `pulumi state delete` refuses to remove before it. */
export const dependenciesOf = (resource: StateResource): string[] => [
  ...(resource.parent ? [resource.parent] : []),
  ...(resource.dependencies ?? []),
  ...Object.values(resource.propertyDependencies ?? {}).flat(),
  ...(resource.deletedWith ? [resource.deletedWith] : []),
];
