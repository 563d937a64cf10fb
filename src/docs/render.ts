/**
 * The generated reference pages under docs/, derived from the declarations the provider runs on: the kinds
 * (`kinds`) with each input's and output's field declaration (`src/provider/fields.ts`), the inputs every kind
 * accepts (`COMMON_INPUTS`), the lookups (`lookupDeclarations`), and the workspace YAML form (the zod document
 * of `src/workspace/spec.ts`, as `workspace.schema.json` describes it). Nothing here is written per kind or per
 * field: a field added to a declaration shows up in the pages, and test/docs.test.ts fails until they are
 * regenerated (`npm run docs`).
 */
import { z } from "zod";
import { lookupDeclarations } from "../lookups";
import { type InputField, REQUIRED_TO_CREATE } from "../provider/fields";
import { COMMON_INPUTS, type Kind } from "../provider/kind";
import { type KindName, kinds } from "../resources";
import type { JsonSchema } from "../schema/package-schema";
import { workspaceJsonSchema } from "../workspace/schema-json";
import { SECTION_OF } from "../workspace/spec";
import { dynamicToken, nativeToken } from "../provider/tokens";
import { kindPageLink, kindPages } from "./kind-pages";
import { settingsPage } from "./settings-table";
import { anchor, code, defaultOf, generatedLine, table, withDeprecation, yesOrBlank } from "./markdown";

const toJsonSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema =>
  z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;

/** The bounds a number carries, leaving out the ones that only say "a safe integer". */
function numberBounds(json: JsonSchema): string {
  const parts: string[] = [];
  if (json.exclusiveMinimum !== undefined) parts.push(`> ${json.exclusiveMinimum}`);
  if (json.minimum !== undefined && json.minimum > Number.MIN_SAFE_INTEGER) parts.push(`≥ ${json.minimum}`);
  if (json.exclusiveMaximum !== undefined) parts.push(`< ${json.exclusiveMaximum}`);
  if (json.maximum !== undefined && json.maximum < Number.MAX_SAFE_INTEGER) parts.push(`≤ ${json.maximum}`);
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}

/** A short type expression for a table cell: `string`, `GUID`, `integer (> 0)`, `{name, value?}[]`, `boolean or {timeoutSeconds}`. */
export function typeOf(json: JsonSchema): string {
  if (json.pulumiType) return json.pulumiType.replace(/^pulumi\.json#\//, "");
  const branches = json.anyOf ?? json.oneOf;
  if (branches) return [...new Set(branches.map(typeOf))].join(" or ");
  if (Array.isArray(json.type)) return json.type.map((type) => typeOf({ ...json, type })).join(" or ");
  if (json.const !== undefined) return JSON.stringify(json.const);
  if (json.enum) return json.enum.map((value) => JSON.stringify(value)).join(" or ");
  switch (json.type) {
    case "string":
      return json.format === "uuid" ? "GUID" : json.format === "uri" ? "URL" : "string";
    case "number":
    case "integer":
      return `${json.type}${numberBounds(json)}`;
    case "boolean":
    case "null":
      return json.type;
    case "array": {
      const items = json.items ? typeOf(json.items) : "any";
      const element = / or /.test(items) ? `(${items})` : items;
      return `${element}[]${json.minItems ? ` (at least ${json.minItems})` : ""}`;
    }
    case "object": {
      if (json.properties && Object.keys(json.properties).length > 0) {
        const required = new Set(json.required ?? []);
        return `{${Object.keys(json.properties)
          .map((name) => `${name}${required.has(name) ? "" : "?"}`)
          .join(", ")}}`;
      }
      const values = typeof json.additionalProperties === "object" ? typeOf(json.additionalProperties) : "any";
      return `map of ${values || "any"}`;
    }
    default:
      return "any";
  }
}

const allKinds = (): Kind[] => Object.values(kinds) as Kind[];

/** The index of the kind pages (docs/kinds/), the columns of their tables, the inputs every kind accepts and the lookups. */
export function renderReference(): string {
  const out: string[] = [generatedLine("the kind declarations (src/resources/, src/provider/fields.ts) and src/lookups.ts")];
  const list = allKinds();
  out.push(
    "",
    "# Reference: kinds, fields and lookups",
    "",
    `The ${list.length} kinds, each a Pulumi resource in two forms over the same field declarations: the dynamic provider's`,
    `\`gms.<Kind>\` (\`${dynamicToken("<Kind>")}\`) and the provider plugin's \`gms.native.<Kind>\``,
    `(\`${nativeToken("<Kind>")}\`). The words are the glossary's ([docs/README.md](README.md#glossary)).`,
    "",
    "## Kinds",
    "",
    ...table(
      ["Kind", "Type token", "Inputs", "Outputs", "What it is"],
      list.map((kind) => [
        `[${kind.name}](${kindPageLink(kind.name)})`,
        code(nativeToken(kind.name)),
        String(Object.keys(kind.inputs).length),
        String(Object.keys(kind.outputs).length),
        withDeprecation(kind.description, kind.deprecated),
      ]),
    ),
    "",
    "Each kind's page has its examples in YAML, TypeScript, Python and Go, its inputs and outputs with each language's",
    "name and type, how to import an existing object, the lookups that feed it and its quirks. The columns of its tables:",
    "",
    "- **required**: the program must set it (a field with a default may be left out: check fills the default in). " +
      `**to create**: a write-only field that only a create needs. ${REQUIRED_TO_CREATE}`,
    "- **update/replace**: what a changed value does: `update` changes the object in place, `replace` makes a new",
    "  object and deletes the old one.",
    "- **secret**: stored as a secret in state whether or not the program passed a secret.",
    "- **write-only**: the service never returns it: `refresh` keeps the value from state.",
    "- **default**: the value check fills in when the program leaves the field out.",
    "",
    "## Inputs every kind accepts",
    "",
    ...table(
      ["field", "type", "required", "update/replace", "secret", "write-only", "default", "description"],
      COMMON_INPUTS.map((name) => commonInputRow(name)),
    ),
    "",
  );
  out.push(
    "## Lookups",
    "",
    "Each as `getX(args)` returning a promise and `getXOutput(args)` returning an Output (`gms.getX`), and as the",
    `package function \`${nativeToken("getX")}\` for programs on the provider plugin.`,
    "",
    ...table(
      ["lookup", "arguments", "result", "description"],
      Object.entries(lookupDeclarations).map(([name, declaration]) => {
        const args = toJsonSchema(declaration.args, "input");
        return [code(name), typeOf(args), typeOf(toJsonSchema(declaration.result, "output")), declaration.description];
      }),
    ),
    "",
  );
  return `${out.join("\n")}`;
}

/** `connection` and `adopt`, as schema.json describes them. */
function commonInputRow(name: (typeof COMMON_INPUTS)[number]): string[] {
  switch (name) {
    case "connection":
      return [
        code("connection"),
        "{baseUrl?, apiKey?}",
        "",
        "replace when `baseUrl` changes; update when `apiKey` alone changes",
        "yes",
        "",
        "",
        "Where this resource's API calls go, when not the stack's `gms:baseUrl` / `gms:apiKey` (or GMS_BASE_URL / GMS_API_KEY). " +
          "Another `apiKey` alone is a key rotation, allowed once both keys are shown to select the same workspace.",
      ];
    case "adopt":
      return [
        code("adopt"),
        "GUID",
        "",
        "",
        "",
        "",
        "",
        "Dynamic resources (`gms.<Kind>`) only: the GUID of an existing object to adopt instead of creating one, since the engine " +
          "cannot import a dynamic resource; a replace-only field that differs from it is an error, the rest is updated to the " +
          "program. The plugin's resources (every other language, `gms.native.<Kind>`) take the `import` resource option instead.",
      ];
  }
}

/** The workspace YAML form: the document's maps, and each entry's fields with what they do to the object. */
export function renderYamlReference(): string {
  const document = workspaceJsonSchema() as JsonSchema;
  const kindOf = new Map(Object.entries(SECTION_OF).map(([kind, section]) => [section as string, kind as KindName]));
  const out: string[] = [
    generatedLine("the workspace document (src/workspace/spec.ts, as src/workspace/workspace.schema.json describes it)"),
    "",
    "# Reference: the workspace YAML form",
    "",
    '`new gms.Workspace(name, { file: "workspace.yaml" })` creates the objects one YAML document declares (or the same',
    "document as an object, `{ spec }`). The document has one map per kind, from a logical name to an entry; the logical",
    "name also names the Pulumi resource (`<workspace>-<logical name>`). An entry takes the kind's inputs",
    "([reference.md](reference.md)), except that it refers to other entries by logical name, and to what the service",
    "cannot create (Actions, Contexts, Eval and Skill types) by name, where the kind takes a GUID; and that a secret is",
    "never written in the file: it is `{ config: <stack config key> }` or `{ env: <VARIABLE> }`.",
    "",
    "Editors complete and check the format with `src/workspace/workspace.schema.json` (put",
    "`# yaml-language-server: $schema=<path to workspace.schema.json>` at the top of the file; `npm run workspace-schema`",
    "regenerates it). The rules across entries (references, one default, `url` or `file`) are checked by the component",
    "before any API call. Entries of one kind with the same name are twins, declared with a warning as in code",
    "([provider.md](provider.md#twins)), except two Apps of one name when an entry refers to Actions of one (Actions",
    "are looked up by the App's name). `examples/yaml-workspace/README.md` describes the format with a full example.",
    "",
    `> ${document.description ?? ""}`,
    "",
    "## Maps",
    "",
    ...table(
      ["map", "kind", "description"],
      Object.entries(document.properties ?? {}).map(([section, json]) => [
        `[${code(section)}](#${anchor(section)})`,
        kindOf.get(section) ?? "",
        json.description ?? "",
      ]),
    ),
    "",
    "Columns: as in [reference.md](reference.md#kinds); update/replace, secret, write-only and default are the kind's.",
    "",
  ];
  for (const [section, json] of Object.entries(document.properties ?? {})) {
    const kindName = kindOf.get(section);
    const kind = kindName ? (kinds[kindName] as Kind) : undefined;
    const entry = (typeof json.additionalProperties === "object" ? json.additionalProperties : {}) as JsonSchema;
    const required = new Set(entry.required ?? []);
    out.push(
      `## ${section}`,
      "",
      `${json.description ?? ""}${kind ? ` Each entry declares one [${kind.name}](${kindPageLink(kind.name)}).` : ""}`,
      "",
    );
    out.push(
      ...table(
        ["field", "type", "required", "update/replace", "secret", "write-only", "default", "description"],
        Object.entries(entry.properties ?? {}).map(([name, field]) => {
          const declared = kind?.inputs[name] as InputField | undefined;
          return [
            code(name),
            typeOf(field),
            yesOrBlank(required.has(name)),
            declared?.change ?? "",
            yesOrBlank(declared?.secret ?? false),
            yesOrBlank(declared?.writeOnly ?? false),
            defaultOf(declared?.default !== undefined ? declared.default : field.default),
            field.description ?? (field.anyOf ?? field.oneOf)?.find((branch) => branch.description)?.description ?? "",
          ];
        }),
      ),
      "",
    );
  }
  return out.join("\n");
}

/** Every page generated whole, by its path relative to the package root. */
export const generatedPages = (): { path: string; text: string }[] => [
  { path: "docs/reference.md", text: renderReference() },
  { path: "docs/workspace-yaml.md", text: renderYamlReference() },
  ...kindPages(),
];

/** Every generated page, and the hand-written page with a generated table. */
export const generatedDocs = (): { path: string; text: string }[] => [...generatedPages(), settingsPage()];
