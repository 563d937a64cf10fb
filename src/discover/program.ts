/**
 * The program discover writes lines for: the language of the Pulumi project in the folder it runs in (`runtime` in
 * Pulumi.yaml), in which `pulumi import --out` writes its code too. Each language says how a resource's property
 * reads a secret config value, the one thing `pulumi import` cannot write (see ./write-only.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { parseYaml } from "../yaml-file";

export interface Language {
  /** The `runtime` of Pulumi.yaml. */
  runtime: string;
  /** The extension of a file of code in it, for `pulumi import --out`. */
  extension: string;
  /** What the program needs once before reading config, if anything. */
  preamble?: string;
  /** The property's line in the resource's declaration, its value the secret config value `configKey`. */
  secretConfigLine(property: string, configKey: string): string;
  /** Where that line goes, for the resource named `name`. */
  where(name: string): string;
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

export const LANGUAGES = {
  // Pulumi YAML reads a stack's config value by its name; declaring it under `config:` is optional.
  yaml: {
    runtime: "yaml",
    extension: "yaml",
    secretConfigLine: (property, key) => `${property}: \${${key}}`,
    where: (name) => `under resources.${name}.properties`,
  },
  nodejs: {
    runtime: "nodejs",
    extension: "ts",
    preamble: "const config = new pulumi.Config();",
    secretConfigLine: (property, key) => `${property}: config.requireSecret(${JSON.stringify(key)}),`,
    where: (name) => `in the arguments of resource "${name}"`,
  },
  python: {
    runtime: "python",
    extension: "py",
    preamble: "config = pulumi.Config()",
    secretConfigLine: (property, key) => `${property}=config.require_secret(${JSON.stringify(key)}),`,
    where: (name) => `in the arguments of resource "${name}"`,
  },
  go: {
    runtime: "go",
    extension: "go",
    preamble: 'cfg := config.New(ctx, "")',
    secretConfigLine: (property, key) => `${capitalized(property)}: cfg.RequireSecret(${JSON.stringify(key)}),`,
    where: (name) => `in the args of resource "${name}"`,
  },
} satisfies Record<string, Language>;

const ProjectFile = z.looseObject({ runtime: z.union([z.string(), z.looseObject({ name: z.string() })]) });

export interface ProjectLanguage {
  language: Language;
  /** Why the language is YAML by default, when it is not the project's (no project, a runtime without lines here). */
  assumed?: string;
}

/** The language of the Pulumi project in `dir`; YAML, saying why, when there is none or lines cannot be written for it. */
export function projectLanguage(dir: string): ProjectLanguage {
  const file = ["Pulumi.yaml", "Pulumi.yml"].map((name) => join(dir, name)).find((path) => existsSync(path));
  if (!file) return { language: LANGUAGES.yaml, assumed: `no Pulumi.yaml in ${dir}` };
  let runtime: string;
  try {
    const project = parseYaml(readFileSync(file, "utf8"), file, ProjectFile);
    runtime = typeof project.runtime === "string" ? project.runtime : project.runtime.name;
  } catch (error) {
    return { language: LANGUAGES.yaml, assumed: `its runtime could not be read: ${(error as Error).message}` };
  }
  const language = Object.hasOwn(LANGUAGES, runtime) ? LANGUAGES[runtime as keyof typeof LANGUAGES] : undefined;
  return language ? { language } : { language: LANGUAGES.yaml, assumed: `no lines are written for the runtime ${runtime}` };
}
