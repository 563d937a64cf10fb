/**
 * YAML validated with zod, with every problem located as `file:line:column: field: message` — for the
 * emulator's fixtures and for declarative workspaces alike.
 */
import { readFileSync } from "node:fs";
import { LineCounter, type Node, parseDocument } from "yaml";
import type { z } from "zod";

export class YamlFileError extends Error {
  override readonly name = "YamlFileError";
  constructor(
    readonly source: string,
    readonly problems: { line: number; column: number; path: string; message: string }[],
  ) {
    super(problems.map((problem) => `${source}:${problem.line}:${problem.column}: ${problem.path ? `${problem.path}: ` : ""}${problem.message}`).join("\n"));
  }
}

/** Parses `text` and validates it; `source` names the file in messages. */
export function parseYaml<S extends z.ZodType>(text: string, source: string, schema: S): z.output<S> {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new YamlFileError(
      source,
      document.errors.map((error) => {
        const at = lines.linePos(error.pos[0]);
        return { line: at.line, column: at.col, path: "", message: error.message.split("\n")[0]! };
      }),
    );
  }
  const result = schema.safeParse(document.toJS() ?? {});
  if (result.success) return result.data;
  throw new YamlFileError(
    source,
    result.error.issues.map((issue) => {
      const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0]! : undefined;
      const path = unknownKey === undefined ? issue.path : [...issue.path, unknownKey];
      const at = lines.linePos(unknownKey === undefined ? locate(document, path) : locateKey(document, issue.path, unknownKey));
      return { line: at.line, column: at.col, path: path.map(String).join("."), message: issue.message };
    }),
  );
}

export function readYamlFile<S extends z.ZodType>(path: string, schema: S): z.output<S> {
  return parseYaml(readFileSync(path, "utf8"), path, schema);
}

/** The offset of the deepest node along `path` that exists: the field itself, else its nearest parent. */
function locate(document: ReturnType<typeof parseDocument>, path: PropertyKey[]): number {
  for (let depth = path.length; depth > 0; depth--) {
    const node = document.getIn(path.slice(0, depth), true) as Node | undefined;
    if (node?.range) return node.range[0];
  }
  return (document.contents as Node | null)?.range?.[0] ?? 0;
}

/** The offset of the key itself, for an unknown key. */
function locateKey(document: ReturnType<typeof parseDocument>, parentPath: PropertyKey[], key: string): number {
  const parent = (parentPath.length === 0 ? document.contents : document.getIn(parentPath, true)) as { items?: { key?: Node & { value?: unknown } }[] } | null;
  const pair = parent?.items?.find((item) => String(item.key?.value) === key);
  return pair?.key?.range?.[0] ?? locate(document, [...parentPath, key]);
}
