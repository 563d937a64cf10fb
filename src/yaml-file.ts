/**
 * YAML validated with zod, with every problem located as `file:line:column: field: message` — for the
 * emulator's fixtures and for declarative workspaces alike.
 */
import { readFileSync } from "node:fs";
import type { Document, Node, ParsedNode } from "yaml";
import type { z } from "zod";

/**
 * The YAML library, loaded by the first parse: a program that declares its resources in code (its process
 * loads this package's index, which holds the YAML workspace) does not pay for it.
 */
const yaml = (): typeof import("yaml") => require("yaml") as typeof import("yaml");

export class YamlFileError extends Error {
  override readonly name = "YamlFileError";
  constructor(
    readonly source: string,
    readonly problems: { line: number; column: number; path: string; message: string }[],
  ) {
    super(
      problems
        .map((problem) => `${source}:${problem.line}:${problem.column}: ${problem.path ? `${problem.path}: ` : ""}${problem.message}`)
        .join("\n"),
    );
  }
}

export interface YamlOptions {
  /**
   * What a key written twice in one map is called in the message, given the path of the map and the key
   * (default `duplicate key "<key>"`); the YAML library's own message follows in parentheses.
   */
  duplicateKey?: (mapPath: string[], key: string) => string;
}

/**
 * The parse options that let `issueMessage` tell a missing field from a wrong one: the issues carry the
 * input they failed on (zod leaves it out by default).
 */
export const REPORT_INPUT = { reportInput: true } as const;

/**
 * A zod issue's message, except that a field that is absent (a value of the wrong type, or matching no
 * option of a union, whose input was `undefined`) reads "is required". Needs the issues of a parse with
 * `REPORT_INPUT`; without the input it keeps zod's message.
 */
export function issueMessage(issue: z.core.$ZodIssue): string {
  const missing = (issue.code === "invalid_type" || issue.code === "invalid_union") && "input" in issue && issue.input === undefined;
  return missing ? "is required" : issue.message;
}

/** Parses `text` and validates it; `source` names the file in messages. */
export function parseYaml<S extends z.ZodType>(text: string, source: string, schema: S, options: YamlOptions = {}): z.output<S> {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new YamlFileError(
      source,
      document.errors.map((error) => {
        const at = lines.linePos(error.pos[0]);
        const message = error.message.split("\n")[0]!;
        const duplicate = error.code === "DUPLICATE_KEY" ? findKey(document.contents, error.pos[0], []) : undefined;
        if (!duplicate) return { line: at.line, column: at.col, path: "", message };
        const name = options.duplicateKey?.(duplicate.mapPath, duplicate.key) ?? `duplicate key "${duplicate.key}"`;
        return { line: at.line, column: at.col, path: [...duplicate.mapPath, duplicate.key].join("."), message: `${name} (${message})` };
      }),
    );
  }
  const result = schema.safeParse(document.toJS() ?? {}, REPORT_INPUT);
  if (result.success) return result.data;
  throw new YamlFileError(
    source,
    result.error.issues.map((issue) => {
      const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0]! : undefined;
      const path = unknownKey === undefined ? issue.path : [...issue.path, unknownKey];
      const at = lines.linePos(unknownKey === undefined ? locate(document, path) : locateKey(document, issue.path, unknownKey));
      return { line: at.line, column: at.col, path: path.map(String).join("."), message: issueMessage(issue) };
    }),
  );
}

export function readYamlFile<S extends z.ZodType>(path: string, schema: S, options?: YamlOptions): z.output<S> {
  return parseYaml(readFileSync(path, "utf8"), path, schema, options);
}

/** The map key that starts at `offset` (where the YAML library reports a duplicate), with the path of its map. */
function findKey(node: ParsedNode | null, offset: number, path: string[]): { mapPath: string[]; key: string } | undefined {
  const { isMap, isScalar, isSeq } = yaml();
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const range = (pair.key as Node | null)?.range;
      if (range && range[0] <= offset && offset < Math.max(range[1], range[0] + 1)) return { mapPath: path, key };
      const found = findKey(pair.value as ParsedNode | null, offset, [...path, key]);
      if (found) return found;
    }
  } else if (isSeq(node)) {
    for (const [index, item] of node.items.entries()) {
      const found = findKey(item as ParsedNode | null, offset, [...path, String(index)]);
      if (found) return found;
    }
  }
  return undefined;
}

/** The offset of the deepest node along `path` that exists: the field itself, else its nearest parent. */
function locate(document: Document.Parsed, path: PropertyKey[]): number {
  for (let depth = path.length; depth > 0; depth--) {
    const node = document.getIn(path.slice(0, depth), true) as Node | undefined;
    if (node?.range) return node.range[0];
  }
  return (document.contents as Node | null)?.range?.[0] ?? 0;
}

/** The offset of the key itself, for an unknown key. */
function locateKey(document: Document.Parsed, parentPath: PropertyKey[], key: string): number {
  const parent = (parentPath.length === 0 ? document.contents : document.getIn(parentPath, true)) as {
    items?: { key?: Node & { value?: unknown } }[];
  } | null;
  const pair = parent?.items?.find((item) => String(item.key?.value) === key);
  return pair?.key?.range?.[0] ?? locate(document, [...parentPath, key]);
}
