/**
 * The example programs of examples/programs/, as the generated docs and schema.json show them: each written once as a
 * Pulumi YAML program, with the TypeScript, Python and Go that `npm run examples` (scripts/examplegen) converts it into
 * beside it. Read from the repository when the pages and the schema are generated; a package without the folder has
 * none.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

/** Where the example programs are, each a folder with its Pulumi.yaml and the generated forms beside it. */
export const EXAMPLES_DIR = "examples/programs";

/** Each form of an example, by the fence tag of its language: the YAML source, then the generated ones. */
const FORMS = [
  ["yaml", "Pulumi.yaml"],
  ["typescript", "typescript/index.ts"],
  ["python", "python/__main__.py"],
  ["go", "go/main.go"],
] as const;

/** How `npm run examples` writes a TypeScript program's import of the plugin's classes. */
const NATIVE_IMPORT = 'import { native as gms } from "pulumi-gms";';
/** The same program on the dynamic resources: the package's root holds them and their lookups, under the same names. */
const DYNAMIC_IMPORT = 'import * as gms from "pulumi-gms";';

/**
 * The TypeScript form of an example on the dynamic resources: the plugin's classes' program with `gms` bound to the
 * package's root, where the dynamic resources (`gms.App`, ...) and the lookups that run in the program (`gms.getAction`,
 * ...) take the same arguments and give the same outputs. test/examples/programs-dynamic.test.ts runs each one.
 */
export function dynamicForm(typescript: string): string {
  if (!typescript.includes(NATIVE_IMPORT))
    throw new Error(`a TypeScript example has no \`${NATIVE_IMPORT}\` to rebind to the dynamic resources`);
  return typescript.replace(NATIVE_IMPORT, DYNAMIC_IMPORT);
}

export interface ExampleProgram {
  /** The folder's name. */
  name: string;
  /** The program's `description`, a title. */
  description: string;
  /** The forms that exist, by fence tag, YAML first. */
  forms: [string, string][];
  /** The TypeScript form on the dynamic resources (dynamicForm), when there is a TypeScript form. */
  dynamic: string | undefined;
  /** The resource types it declares. */
  types: Set<string>;
  /** The functions it invokes. */
  functions: Set<string>;
}

/** The example programs, in folder order. */
export function examplePrograms(root = join(__dirname, "..", "..")): ExampleProgram[] {
  const dir = join(root, EXAMPLES_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, "Pulumi.yaml")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const yaml = readFileSync(join(dir, name, "Pulumi.yaml"), "utf8");
      const program = parse(yaml) as { description?: string; resources?: Record<string, { type: string }> };
      const forms = FORMS.filter(([, file]) => existsSync(join(dir, name, file))).map(
        ([tag, file]) => [tag, readFileSync(join(dir, name, file), "utf8")] as [string, string],
      );
      const typescript = forms.find(([tag]) => tag === "typescript")?.[1];
      return {
        name,
        description: program.description ?? name,
        forms,
        dynamic: typescript === undefined ? undefined : dynamicForm(typescript),
        types: new Set(Object.values(program.resources ?? {}).map((resource) => resource.type)),
        functions: new Set([...yaml.matchAll(/function:\s*(gms:index:\w+)/g)].map((match) => match[1]!)),
      };
    });
}

/** A fenced block of `text` tagged `tag`. */
export const fenced = (tag: string, text: string): string[] => [`\`\`\`${tag}`, text.trimEnd(), "```"];

/**
 * The examples of a resource's description in schema.json, in the shortcodes Pulumi's SDK generators read: each
 * language's SDK keeps the block of its own language in the resource's docs (the Python docstring, the Go comment).
 */
export function schemaExamples(programs: readonly ExampleProgram[]): string {
  if (programs.length === 0) return "";
  const blocks = programs.flatMap((program) => [
    "{{% example %}}",
    `### ${program.description}`,
    "",
    ...program.forms.flatMap(([tag, text]) => fenced(tag, text)),
    "{{% /example %}}",
  ]);
  return ["", "", "{{% examples %}}", "## Example Usage", "", ...blocks, "{{% /examples %}}"].join("\n");
}
