/**
 * The Pulumi package schema (`schema.json`), derived from the declarations that drive the provider: every
 * kind's fields (`kinds`) and every lookup's arguments and result (`lookupDeclarations`). Field types come
 * from the zod schemas through `z.toJSONSchema`, converted to Pulumi type specs; object shapes become named
 * types in `types`. Nothing here is written per kind.
 */
import { z } from "zod";
import { lookupDeclarations } from "../lookups";
import { Connection } from "../provider/connection";
import { formerTokens } from "../provider/deprecation";
import { type InputField, type OutputField, REQUIRED_TO_CREATE, requiredToDeclare } from "../provider/fields";
import type { Kind } from "../provider/kind";
import { kinds } from "../resources";
import { goImportPath, packageManifest, pluginDownloadURL } from "../manifest";
import { nativeToken, PACKAGE } from "../provider/tokens";
import { SETTING_NAMES, SETTINGS, settingDescription } from "../settings";

const ANY = "pulumi.json#/Any";

interface TypeSpec {
  type?: "string" | "number" | "integer" | "boolean" | "array" | "object";
  items?: TypeSpec;
  additionalProperties?: TypeSpec;
  oneOf?: TypeSpec[];
  $ref?: string;
}
interface PropertySpec extends TypeSpec {
  description?: string;
  default?: string | number | boolean;
  defaultInfo?: { environment: string[] };
  secret?: boolean;
  replaceOnChanges?: boolean;
  willReplaceOnChanges?: boolean;
  deprecationMessage?: string;
}
interface ObjectTypeSpec {
  type: "object";
  description?: string;
  properties: Record<string, PropertySpec>;
  required?: string[];
}

/** The subset of JSON Schema that `z.toJSONSchema` produces, plus the annotations below (also read by src/docs/render.ts). */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  description?: string;
  /** Names the Pulumi object type (zod `.meta({ title })`); otherwise the name comes from where the shape is used. */
  title?: string;
  /** Marks a property secret (zod `.meta({ secret: true })`). */
  secret?: boolean;
  /** A Pulumi type reference to use as is, for example `pulumi.json#/Asset` (zod `.meta({ pulumiType })`). */
  pulumiType?: string;
}

/**
 * Schema notes for zod schemas shared with code that must not carry them: the connection every kind and
 * lookup accepts (its `apiKey` is a secret).
 */
const annotations = new Map<unknown, JsonSchema>([
  [
    Connection,
    {
      title: "Connection",
      description: "Where API calls go, when not the stack's `gms:baseUrl` / `gms:apiKey` (or GMS_BASE_URL / GMS_API_KEY).",
    },
  ],
  [Connection.shape.baseUrl, { description: "The service's base URL, ending in `/v1`." }],
  [Connection.shape.apiKey, { description: "The API key; it selects the workspace.", secret: true }],
]);

const toJsonSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema =>
  z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: (context) => {
      const notes = annotations.get(context.zodSchema);
      if (notes) Object.assign(context.jsonSchema, notes);
    },
  }) as JsonSchema;

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);
/** `evalTypes` → `EvalType`: array elements are named in the singular. */
const singular = (name: string): string => (name.endsWith("s") && !name.endsWith("ss") ? name.slice(0, -1) : name);
const isPrimitive = (value: unknown): value is string | number | boolean => ["string", "number", "boolean"].includes(typeof value);
const canonical = (value: unknown): string => JSON.stringify(sortKeys(value));

/** Collects the named object types while converting JSON Schema to Pulumi type specs. */
class TypeCollector {
  readonly types = new Map<string, ObjectTypeSpec>();
  private readonly byShape = new Map<string, string>();

  /** `name` names an object type met here (unless it has a title); `origin` says where, for its description. */
  typeSpec(json: JsonSchema, name: string, origin: string): TypeSpec {
    if (json.pulumiType) return { $ref: json.pulumiType };
    const branches = json.anyOf ?? json.oneOf;
    if (branches) return this.union(branches, name, origin);
    if (Array.isArray(json.type))
      return this.union(
        json.type.map((type) => ({ ...json, type })),
        name,
        origin,
      );
    if (json.const !== undefined) return primitiveOf([json.const]);
    if (json.enum) return primitiveOf(json.enum);
    switch (json.type) {
      case "string":
      case "number":
      case "integer":
      case "boolean":
        return { type: json.type };
      case "array":
        return { type: "array", items: json.items ? this.typeSpec(json.items, singular(name), `${origin}[*]`) : { $ref: ANY } };
      case "object":
        if (json.properties && Object.keys(json.properties).length > 0) return { $ref: `#/types/${this.objectType(json, name, origin)}` };
        return {
          type: "object",
          additionalProperties:
            typeof json.additionalProperties === "object"
              ? this.typeSpec(json.additionalProperties, `${name}Value`, `${origin}.*`)
              : { $ref: ANY },
        };
      case undefined:
        return { $ref: ANY };
      default:
        throw new Error(`${origin}: no Pulumi type for JSON Schema type "${json.type}"`);
    }
  }

  /** A property: its type, plus the description, primitive default and secret flag the JSON Schema carries. */
  propertySpec(json: JsonSchema, name: string, origin: string): PropertySpec {
    const spec: PropertySpec = { ...this.typeSpec(json, name, origin) };
    const description = json.description ?? (json.anyOf ?? json.oneOf)?.find((branch) => branch.description)?.description;
    if (description) spec.description = description;
    if (isPrimitive(json.default)) spec.default = json.default;
    if (json.secret) spec.secret = true;
    return spec;
  }

  /** An object's properties and required list, as a function's inputs or outputs take them. */
  objectTypeSpec(json: JsonSchema, name: string, origin: string): ObjectTypeSpec {
    const properties: Record<string, PropertySpec> = {};
    for (const [property, schema] of Object.entries(json.properties ?? {})) {
      properties[property] = this.propertySpec(schema, `${name}${pascal(property)}`, `${origin}.${property}`);
    }
    const spec: ObjectTypeSpec = { type: "object", properties };
    if (json.description) spec.description = json.description;
    // Pulumi's `required` means always set: a property that may be null is optional to Pulumi.
    const required = (json.required ?? []).filter((property) => property in properties && !acceptsNull(json.properties![property]!));
    if (required.length > 0) spec.required = required;
    return spec;
  }

  private union(branches: JsonSchema[], name: string, origin: string): TypeSpec {
    const specs: TypeSpec[] = [];
    for (const branch of branches.filter((branch) => branch.type !== "null")) {
      const spec = this.typeSpec(branch, name, origin);
      if (!specs.some((known) => canonical(known) === canonical(spec))) specs.push(spec);
    }
    if (specs.length === 0) return { $ref: ANY };
    return specs.length === 1 ? specs[0]! : { oneOf: specs };
  }

  /** Registers an object type, reusing an identical shape already registered, and returns its token. */
  private objectType(json: JsonSchema, name: string, origin: string): string {
    const typeName = json.title ?? name;
    const spec = this.objectTypeSpec(json, typeName, origin);
    if (!spec.description) spec.description = `The shape of \`${origin}\`.`;
    const { description: _description, ...shape } = spec;
    const known = this.byShape.get(canonical(shape));
    if (known) return known;
    const token = nativeToken(typeName);
    if (this.types.has(token)) {
      throw new Error(
        `${origin}: the type name ${typeName} is taken by a different shape; give one of them a name with zod's .meta({ title })`,
      );
    }
    this.types.set(token, spec);
    this.byShape.set(canonical(shape), token);
    return token;
  }
}

/** An enum or const: the primitive type of its values (enums are plain strings in this schema). */
function primitiveOf(values: unknown[]): TypeSpec {
  const types = [...new Set(values.map((value) => (Number.isInteger(value) ? "integer" : typeof value)))];
  if (types.length === 1 && ["string", "number", "integer", "boolean"].includes(types[0]!)) return { type: types[0] as TypeSpec["type"] };
  return { $ref: ANY };
}

/** The schema of `COMMON_INPUTS` but `DYNAMIC_ONLY_INPUTS`: the inputs every kind accepts on the plugin besides its own fields. */
const commonInputs = (collector: TypeCollector): Record<string, PropertySpec> => ({
  connection: {
    ...collector.typeSpec(toJsonSchema(Connection, "input"), "Connection", "connection"),
    description:
      "Where this resource's API calls go, when not the stack's `gms:baseUrl` / `gms:apiKey`. Stored as a secret. Another `baseUrl` replaces the " +
      "resource (created there, deleted here); another `apiKey` alone updates in place once both keys are shown to select the same workspace.",
    secret: true,
  },
});

function inputProperty(collector: TypeCollector, kind: Kind, name: string, field: InputField): PropertySpec {
  const spec = collector.propertySpec(toJsonSchema(field.schema, "input"), `${kind.name}${pascal(name)}`, `${kind.name}.${name}`);
  spec.description = field.required && !requiredToDeclare(field) ? `${field.description} ${REQUIRED_TO_CREATE}` : field.description;
  delete spec.default;
  if (isPrimitive(field.default)) spec.default = field.default;
  if (field.secret) spec.secret = true;
  if (field.change === "replace") {
    spec.replaceOnChanges = true;
    spec.willReplaceOnChanges = true;
  }
  if (field.deprecated) spec.deprecationMessage = field.deprecated;
  return spec;
}

function outputProperty(collector: TypeCollector, kind: Kind, name: string, field: OutputField): { spec: PropertySpec; nullable: boolean } {
  const json = toJsonSchema(field.schema, "output");
  const spec = collector.propertySpec(json, `${kind.name}${pascal(name)}`, `${kind.name}.${name}`);
  spec.description = field.description;
  if (field.secret) spec.secret = true;
  if (field.deprecated) spec.deprecationMessage = field.deprecated;
  return { spec, nullable: acceptsNull(json) };
}

const acceptsNull = (json: JsonSchema): boolean =>
  json.type === "null" || (Array.isArray(json.type) && json.type.includes("null")) || (json.anyOf ?? json.oneOf ?? []).some(acceptsNull);

function resourceSpec(collector: TypeCollector, kind: Kind, examples: ResourceExamples) {
  const inputProperties: Record<string, PropertySpec> = {};
  for (const [name, field] of Object.entries(kind.inputs)) inputProperties[name] = inputProperty(collector, kind, name, field);
  Object.assign(inputProperties, commonInputs(collector));
  const requiredInputs = Object.entries(kind.inputs)
    .filter(([, field]) => requiredToDeclare(field))
    .map(([name]) => name);

  // The state holds every input (write-only ones from the program) and what the service computes.
  const properties: Record<string, PropertySpec> = { ...inputProperties };
  const required = [...requiredInputs];
  for (const [name, field] of Object.entries(kind.outputs)) {
    const { spec, nullable } = outputProperty(collector, kind, name, field);
    properties[name] = spec;
    if (!nullable) required.push(name);
  }
  const aliases = formerTokens(kind, "native").map((type) => ({ type }));
  return {
    description: `${kind.description}${examples(nativeToken(kind.name))}`,
    inputProperties,
    requiredInputs,
    properties,
    required,
    ...(kind.deprecated ? { deprecationMessage: kind.deprecated } : {}),
    ...(aliases.length > 0 ? { aliases } : {}),
  };
}

function functionSpec(collector: TypeCollector, name: string, declaration: { description: string; args: z.ZodType; result: z.ZodType }) {
  const base = pascal(name.replace(/^get/, ""));
  const inputs = collector.objectTypeSpec(toJsonSchema(declaration.args, "input"), `${base}Args`, `${name}(args)`);
  if (inputs.properties.connection) inputs.properties.connection.secret = true;
  const result = toJsonSchema(declaration.result, "output");
  // An object result is the function's outputs bag; any other result (the lists) is its return type as is.
  const outputs =
    result.type === "object" && result.properties
      ? collector.objectTypeSpec(result, `${base}Result`, `${name}()`)
      : collector.typeSpec(result, `${base}Result`, `${name}()`);
  return { description: declaration.description, inputs, outputs };
}

/**
 * The provider's configuration: the stack's `gms:*` settings, and the inputs of an explicit provider
 * (`pulumi:providers:gms`, the native SDKs' `Provider` class), which take the same properties.
 */
const CONFIG_VARIABLES: Record<string, Record<string, unknown>> = Object.fromEntries(
  SETTING_NAMES.map((name) => {
    const { type, secret, env } = SETTINGS[name];
    return [name, { type, description: settingDescription(name), ...(secret ? { secret } : {}), defaultInfo: { environment: [env] } }];
  }),
);

/** What the SDKs generated from the schema are (the wheel's summary, the Go package's doc comment). */
const SDK_DESCRIPTION =
  "The Pulumi provider for generation management service workspaces: Apps, provider connections with their secret keys, " +
  "Models, Workflows, Datasets, Evals, Experiments, Skills, Context Sources and fine-tunes, on the gms provider plugin.";

/** The Python SDK's README (the wheel's long description): how it installs, and a first program. */
const PYTHON_README = `# pulumi_gms

${SDK_DESCRIPTION}

## Install

    pip install pulumi pulumi_gms

The Pulumi engine downloads the provider plugin, \`pulumi-resource-gms\`, on the first \`pulumi up\`.

## A first program

\`\`\`python
import pulumi
import pulumi_gms as gms

key = pulumi.Config().require_secret("openaiKey")
support = gms.App("support", name="Customer support", description="Answers tickets")
openai = gms.ProviderConnection("openai", provider="openai", key=key, nickname="Main")
gpt = gms.Model("gpt", llm="gpt-4o", provider=openai.id, key=key)
pulumi.export("appGuid", support.guid)
\`\`\`

with the service and its key in the stack's configuration:

    pulumi config set gms:baseUrl https://gms.example.com/v1
    pulumi config set --secret gms:apiKey <API key>
    pulumi config set --secret openaiKey <the provider's key>
    pulumi up
`;

/**
 * What a resource's description ends with: its examples, by its type token ("" for none). The docs supply the
 * repository's example programs (src/docs/schema-file.ts); the schema itself knows nothing of them.
 */
export type ResourceExamples = (token: string) => string;

/**
 * The package schema as an object, derived from `kinds` (or another `registry`, a test's) and `lookupDeclarations`, each
 * resource's description ending with its `examples` (schema.json has the repository's; the plugin serves schema.json
 * itself).
 */
export function generatePackageSchema({
  examples = () => "",
  registry = kinds,
}: {
  examples?: ResourceExamples;
  registry?: Readonly<Record<string, Kind>>;
} = {}): Record<string, unknown> {
  const collector = new TypeCollector();
  const resources: Record<string, unknown> = {};
  for (const kind of Object.values(registry)) resources[nativeToken(kind.name)] = resourceSpec(collector, kind, examples);
  const functions: Record<string, unknown> = {};
  for (const [name, declaration] of Object.entries(lookupDeclarations))
    functions[nativeToken(name)] = functionSpec(collector, name, declaration);

  return sortKeys({
    name: PACKAGE,
    displayName: "GMS",
    version: packageManifest.version,
    // Sent by every SDK with its resources, so that the engine downloads the plugin by itself.
    pluginDownloadURL,
    description: SDK_DESCRIPTION,
    license: packageManifest.license,
    keywords: ["pulumi", "gms", "category/utility"],
    config: { variables: CONFIG_VARIABLES },
    provider: {
      description: "The gms provider: where calls go (`baseUrl`, `apiKey`) and how hard they are retried.",
      inputProperties: CONFIG_VARIABLES,
    },
    types: Object.fromEntries(collector.types),
    resources,
    functions,
    language: {
      // The Go SDK's import path (scripts/dist/sdks.mts); without it the generator imports example.com/....
      go: { importBasePath: goImportPath },
      nodejs: { packageName: "pulumi-gms" },
      python: { packageName: "pulumi_gms", respectSchemaVersion: true, readme: PYTHON_README },
    },
    // The generators write the version into the SDKs (pulumi-plugin.json, the Python package, the Go SDK's
    // resource options) and a go.mod for the Go SDK only with supportPack.
    meta: { supportPack: true },
  }) as Record<string, unknown>;
}

/** schema.json as committed beside src/ and dist/ (a bundler carries it into the release's executables). */
export const committedPackageSchema = (): Record<string, unknown> => require("../../schema.json");

/** Object keys sorted at every depth (arrays keep their order), so the file does not depend on insertion order. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
