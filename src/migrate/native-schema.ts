/**
 * The native resources as the package schema declares them (`schema.json`, generated from the same field
 * declarations as the dynamic resources): per kind, its type token and which inputs and outputs it has, and
 * which of them are secret. The migration copies only those from the dynamic resource's state, so the dynamic
 * provider's own properties (`__provider`, `__secretInputs`, ...) never reach the native state.
 */
import { KIND_NAMES, type KindName } from "../resources";
import { committedPackageSchema } from "../schema/package-schema";
import { MigrationError } from "./errors";
import { nativeToken } from "../provider/tokens";

export interface NativeKind {
  /** `gms:index:<Kind>`. */
  type: string;
  inputs: ReadonlySet<string>;
  outputs: ReadonlySet<string>;
  secrets: ReadonlySet<string>;
}

export type NativeSchema = Record<KindName, NativeKind>;

interface SchemaProperty {
  secret?: boolean;
}
interface SchemaResource {
  inputProperties?: Record<string, SchemaProperty>;
  properties?: Record<string, SchemaProperty>;
}

/** The kinds of a package schema document; a kind it lacks is an error naming it. */
export function nativeSchemaOf(schema: { resources?: Record<string, SchemaResource> }, source: string): NativeSchema {
  const entries = KIND_NAMES.map((kind): [KindName, NativeKind] => {
    const resource = schema.resources?.[nativeToken(kind)];
    if (!resource) throw new MigrationError("NO_SCHEMA", `${source} declares no resource ${nativeToken(kind)}`);
    const inputs = resource.inputProperties ?? {};
    const outputs = resource.properties ?? {};
    const secrets = [...Object.entries(inputs), ...Object.entries(outputs)].filter(([, property]) => property.secret).map(([name]) => name);
    return [
      kind,
      { type: nativeToken(kind), inputs: new Set(Object.keys(inputs)), outputs: new Set(Object.keys(outputs)), secrets: new Set(secrets) },
    ];
  });
  return Object.fromEntries(entries) as NativeSchema;
}

/** The package's own `schema.json` (beside `src/` and `dist/`, and shipped in the package). */
export function packageNativeSchema(): NativeSchema {
  return nativeSchemaOf(committedPackageSchema() as Parameters<typeof nativeSchemaOf>[0], "schema.json");
}
