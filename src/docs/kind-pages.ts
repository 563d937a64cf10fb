/**
 * A page per kind under docs/kinds/, as a provider's registry page has it: what the kind is; its examples, each the
 * whole program in YAML (as written in examples/programs/) and in the TypeScript, Python and Go that `npm run
 * examples` converts it into; its inputs and outputs with each language's name and type (derived from schema.json's
 * property specs, as the SDK generators derive them: test/release/sdks.test.ts holds them to the generated SDKs);
 * which fields update in place or replace, which are secret or write-only; how to import an existing object and what
 * the program must then declare; the lookups its examples feed it from; and its quirks as the service has them.
 */
import { type InputField, type OutputField, requiredToDeclare } from "../provider/fields";
import type { Kind } from "../provider/kind";
import { kindFileName, nativeToken } from "../provider/tokens";
import { kinds } from "../resources";
import { generatePackageSchema } from "../schema/package-schema";
import { EXAMPLES_DIR, type ExampleProgram, examplePrograms, fenced } from "./example-programs";
import { code, defaultOf, generatedLine, table, withDeprecation, yesOrBlank } from "./markdown";
import { formerTokens } from "../provider/deprecation";

interface PropertySpec {
  type?: string;
  $ref?: string;
  items?: PropertySpec;
  additionalProperties?: PropertySpec;
  oneOf?: PropertySpec[];
}

/** `docs/kinds/<kind>.md`: the kind's name in lowercase words joined by dashes. */
export const kindPagePath = (kind: string): string => `docs/${kindPageLink(kind)}`;
/** The link to a kind's page from a page of docs/. */
export const kindPageLink = (kind: string): string => `kinds/${kindFileName(kind)}.md`;

/** The Python SDK's name of a property: snake_case. */
export const pythonName = (name: string): string => name.replace(/([A-Z])/g, "_$1").toLowerCase();
/** The Go SDK's name of a property: its first letter capitalised. */
export const goName = (name: string): string => name[0]!.toUpperCase() + name.slice(1);

const refName = (ref: string): string => ref.slice(ref.lastIndexOf(":") + 1);

/** The Go SDK's type of an input of an Args struct (`required`: not a pointer). */
export function goInputType(spec: PropertySpec, required: boolean): string {
  const ptr = required ? "" : "Ptr";
  if (spec.oneOf) return "pulumi.Input";
  if (spec.$ref === "pulumi.json#/Asset") return "pulumi.AssetOrArchiveInput";
  if (spec.$ref === "pulumi.json#/Any") return "pulumi.Input";
  if (spec.$ref) return `${refName(spec.$ref)}${ptr}Input`;
  switch (spec.type) {
    case "array":
      return spec.items?.$ref ? `${refName(spec.items.$ref)}ArrayInput` : `pulumi.${scalarGo(spec.items?.type)}ArrayInput`;
    case "object":
      return "pulumi.MapInput";
    default:
      return `pulumi.${scalarGo(spec.type)}${ptr}Input`;
  }
}

/** The Go SDK's type of an output of the resource struct (`required`: always set, so not a pointer). */
export function goOutputType(spec: PropertySpec, required: boolean): string {
  return goInputType(spec, required)
    .replace(/Input$/, "Output")
    .replace(/^pulumi\.Output$/, "pulumi.AnyOutput");
}

const scalarGo = (type: string | undefined): string =>
  ({ string: "String", integer: "Int", number: "Float64", boolean: "Bool" })[type ?? ""] ?? "Any";

/** The Python SDK's type of an input, as its signature reads without `pulumi.Input[...]` and `Optional[...]`. */
export function pythonInputType(spec: PropertySpec): string {
  if (spec.oneOf) return `Union[${spec.oneOf.map(pythonInputType).join(", ")}]`;
  if (spec.$ref === "pulumi.json#/Asset") return "Union[pulumi.Asset, pulumi.Archive]";
  if (spec.$ref === "pulumi.json#/Any") return "Any";
  if (spec.$ref) return `'${refName(spec.$ref)}Args'`;
  switch (spec.type) {
    case "array":
      return `Sequence[${spec.items ? pythonInputType(spec.items) : "Any"}]`;
    case "object":
      return `Mapping[str, ${spec.additionalProperties ? pythonInputType(spec.additionalProperties) : "Any"}]`;
    default:
      return ({ string: "str", integer: "int", number: "float", boolean: "bool" } as Record<string, string>)[spec.type ?? ""] ?? "Any";
  }
}

interface ResourceSpec {
  inputProperties: Record<string, PropertySpec>;
  properties: Record<string, PropertySpec>;
  requiredInputs?: string[];
  required?: string[];
}

/** What the pages are made from, read once for all of them: the package schema and the example programs. */
interface PageSources {
  schema: Record<string, unknown>;
  programs: ExampleProgram[];
}

const pageSources = (): PageSources => ({ schema: generatePackageSchema(), programs: examplePrograms() });

const resourceSpec = (schema: Record<string, unknown>, kind: string): ResourceSpec =>
  (schema.resources as Record<string, ResourceSpec>)[nativeToken(kind)]!;

/** Each input of the kind's Args in the Go and Python SDKs: the property, the Go field and type, the Python name and type. */
export function sdkInputs(
  kind: string,
  schema = generatePackageSchema(),
): { name: string; go: string; goType: string; python: string; pythonType: string }[] {
  const spec = resourceSpec(schema, kind);
  const required = new Set(spec.requiredInputs ?? []);
  return Object.entries(spec.inputProperties).map(([name, property]) => ({
    name,
    go: goName(name),
    goType: goInputType(property, required.has(name)),
    python: pythonName(name),
    pythonType: pythonInputType(property),
  }));
}

/** Each output of the kind's resource in the Go SDK, by the field the resource struct has (always set: not a pointer). */
function goOutputs(kind: string, schema: Record<string, unknown>): Record<string, { go: string; goType: string }> {
  const spec = resourceSpec(schema, kind);
  const required = new Set(spec.required ?? []);
  return Object.fromEntries(
    Object.entries(spec.properties).map(([name, property]) => [
      name,
      { go: goName(name), goType: goOutputType(property, required.has(name)) },
    ]),
  );
}

/** The page of one kind. */
export function renderKindPage(kind: Kind, { schema, programs }: PageSources = pageSources()): string {
  const token = nativeToken(kind.name);
  const shown = programs.filter((example) => example.types.has(token));
  const inputs = Object.fromEntries(sdkInputs(kind.name, schema).map((input) => [input.name, input]));
  const outputs = goOutputs(kind.name, schema);
  const writeOnly = Object.entries(kind.inputs as Record<string, InputField>).filter(([, field]) => field.writeOnly);
  const lookups = [...new Set(shown.flatMap((example) => [...example.functions]))].sort();
  const out: string[] = [
    generatedLine(`src/resources/ (the ${kind.name} declaration), schema.json and ${EXAMPLES_DIR}/`),
    "",
    `# ${kind.name}`,
    "",
    `\`${token}\`: ${withDeprecation(kind.description, kind.deprecated)}`,
    "",
  ];
  const former = formerTokens(kind, "native");
  if (former.length > 0)
    out.push(
      `Formerly ${former.map(code).join(", ")} (the dynamic resources' ${formerTokens(kind, "dynamic").map(code).join(", ")}): a stack that ` +
        `holds a resource of the old type keeps its object, since the new type lists the old one as an alias; a program names ${code(token)} now.`,
      "",
    );
  for (const example of shown) {
    out.push(
      `## Example: ${example.description}`,
      "",
      `From [${EXAMPLES_DIR}/${example.name}](../../${EXAMPLES_DIR}/${example.name}/).`,
      "",
    );
    for (const [tag, text] of example.forms) {
      if (tag !== "typescript") {
        out.push(...fenced(tag, text), "");
        continue;
      }
      out.push("TypeScript, with the plugin's classes:", "", ...fenced(tag, text), "");
      if (example.dynamic !== undefined) out.push(DYNAMIC_CAPTION, "", ...fenced(tag, example.dynamic), "");
    }
  }
  out.push(
    "## Inputs",
    "",
    "The name in YAML and TypeScript, then in Python (keyword arguments) and Go (`" + `${kind.name}Args` + "` fields).",
    "",
    ...table(
      ["YAML / TypeScript", "Python", "Go", "required", "update/replace", "secret", "write-only", "default", "description"],
      Object.entries(kind.inputs as Record<string, InputField>).map(([name, field]) => [
        code(name),
        `${code(inputs[name]!.python)}: ${code(inputs[name]!.pythonType)}`,
        `${code(inputs[name]!.go)} ${code(inputs[name]!.goType)}`,
        field.required && !requiredToDeclare(field) ? "to create" : yesOrBlank(field.required),
        field.change,
        yesOrBlank(field.secret),
        yesOrBlank(field.writeOnly),
        defaultOf(field.default),
        withDeprecation(field.description, field.deprecated),
      ]),
    ),
    "",
    "`connection` (Python `connection`, Go `Connection`), where this resource's calls go when not the stack's configuration, is",
    "taken by every kind ([reference.md](../reference.md#inputs-every-kind-accepts)).",
    "",
    "## Outputs",
    "",
    ...table(
      ["YAML / TypeScript", "Python", "Go", "secret", "description"],
      Object.entries(kind.outputs as Record<string, OutputField>).map(([name, field]) => [
        code(name),
        code(pythonName(name)),
        `${code(outputs[name]!.go)} ${code(outputs[name]!.goType)}`,
        yesOrBlank(field.secret),
        withDeprecation(field.description, field.deprecated),
      ]),
    ),
    "",
    "## Import",
    "",
    `An object made outside Pulumi comes under management by its GUID: \`pulumi import ${token} <name> <guid>\` in a YAML`,
    "project (the command writes the resource's code), or the `import` resource option in any language (`import: <guid>` in",
    "YAML's `options`, `{ import: guid }` in TypeScript, `pulumi.ResourceOptions(import_=guid)` in Python,",
    "`pulumi.Import(pulumi.ID(guid))` in Go), with the program declaring the object's values; the next preview then shows no change.",
    "For a whole workspace (or the part a team picks), `pulumi-gms discover --language yaml|typescript|python|go` writes the",
    "program that declares every object with its values and its `import` option; it runs on the language's host, as any",
    "program does ([Adopting an existing workspace](../../README.md#adopting-an-existing-workspace)).",
    "",
    writeOnly.length > 0 ? writeOnlyImportNote(writeOnly.map(([name]) => name)) : "Import reads every input back from the service.",
    "",
  );
  if (lookups.length > 0) {
    out.push(
      "## Lookups that feed it",
      "",
      "What the public interface cannot create is looked up by name; the examples above use:",
      "",
      ...lookups.map(
        (name) =>
          `- \`${name}\` (${lookupNames(name)}): ` +
          firstLine((schema.functions as Record<string, { description?: string }>)[name]?.description),
      ),
      "",
      "In TypeScript the plugin's classes (`gms.native`) and the dynamic resources (`gms`) have each lookup under the same",
      "name: the plugin serves the first, the second runs in the program, against the same `gms:baseUrl` and `gms:apiKey`.",
      "",
    );
  }
  if (kind.quirks && kind.quirks.length > 0) {
    out.push("## As the service has it", "", ...kind.quirks.map((quirk) => `- ${quirk}`), "");
  }
  return out.join("\n");
}

/** What the examples call the TypeScript form on the dynamic resources, beside the one on the plugin's classes. */
const DYNAMIC_CAPTION = "TypeScript, with the dynamic resources, which need no plugin ([which to pick](../provider.md#dynamic-or-native)):";

/** A function's name in each SDK, from its token (`gms:index:getAction`): TypeScript, Python, Go, each with its Output form. */
function lookupNames(token: string): string {
  const name = token.slice(token.lastIndexOf(":") + 1);
  return [
    `TypeScript \`gms.${name}\`, \`gms.${name}Output\``,
    `Python \`gms.${pythonName(name)}\`, \`gms.${pythonName(name)}_output\``,
    `Go \`gms.${goName(name)}\`, \`gms.${goName(name)}Output\``,
  ].join("; ");
}

/** What import cannot read back: the write-only inputs, which the program must then declare. */
function writeOnlyImportNote(names: string[]): string {
  const them = names.length === 1 ? "it" : "them";
  return (
    `The service never returns ${names.map(code).join(", ")}: import cannot read ${them} back, so the program must ` +
    `declare ${them} (from secret config), and the value is taken as the object's.`
  );
}

const firstLine = (text: string | undefined): string => (text ?? "").split("\n")[0]!;

/** Every kind's page, made from one reading of the schema and the examples. */
export function kindPages(): { path: string; text: string }[] {
  const sources = pageSources();
  return (Object.values(kinds) as Kind[]).map((kind) => ({ path: kindPagePath(kind.name), text: renderKindPage(kind, sources) }));
}
