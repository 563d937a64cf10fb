import type { FastifyInstance } from "fastify";

/**
 * How deeply a JSON request body may nest objects and arrays (the body itself is level 1). Spec: not
 * shown. No request of the interface comes near it (a Data record's `metadata` or a Workflow input of
 * a few levels), while a body nested thousands of levels deep would overflow the stack wherever it is
 * serialised again (storing it, answering it) and end in a 500.
 */
export const MAX_JSON_DEPTH = 100;

/** A JSON body nested deeper than {@link MAX_JSON_DEPTH}; the error handler answers 400 with its message. */
export class JsonTooDeepError extends Error {
  override readonly name = "JsonTooDeepError";
  readonly code = "GMS_JSON_TOO_DEEP";
  readonly statusCode = 400;
  constructor(readonly limit: number) {
    super(`JSON body nested deeper than ${limit} levels`);
  }
}

/**
 * Replaces Fastify's JSON parser. Clients send `Content-Type: application/json` on every request (spec,
 * Authentication), bodiless GET and DELETE included: an empty JSON body is no body, as FastAPI treats it.
 * Nesting is bounded before parsing, so no deeper value ever reaches the routes or the store. Malformed JSON
 * answers 400 naming the line, column and offset where it breaks and what was expected there (see {@link MalformedJsonError}).
 */
export function installJsonBodyParser(app: FastifyInstance, maxDepth = MAX_JSON_DEPTH): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text === "") return done(null, undefined);
    if (nestsDeeperThan(text, maxDepth)) return done(new JsonTooDeepError(maxDepth), undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // JSON.parse's own message may quote the body: the answer names the place and what was expected instead.
      return done(new MalformedJsonError(findJsonSyntaxError(text)), undefined);
    }
    done(null, parsed);
  });
}

/**
 * Whether the brackets of `text` (outside strings) nest deeper than `limit`. One pass without parsing;
 * on malformed JSON the count may be off, but JSON.parse then rejects it anyway.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  if (text.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c /* \ */) i++;
      else if (code === 0x22 /* " */) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

/** Where a JSON body stops being JSON and what was expected there; never any of the body's characters. */
export interface JsonSyntaxProblem {
  /** Zero-based offset in characters (UTF-16 code units) of the decoded body. */
  offset: number;
  /** One-based line and column (a column counts characters from the line's start). */
  line: number;
  column: number;
  expected: string;
  /** What stands there, as a kind ("end of body", "a letter", "','"): a structural character is named, content is not. */
  found: string;
}

/**
 * A body sent as JSON that is not JSON: 400, its message naming where (line, column, offset) and what was
 * expected. The body's own characters are never quoted (a body may hold keys or credentials), only
 * structural JSON punctuation.
 */
export class MalformedJsonError extends Error {
  override readonly name = "MalformedJsonError";
  readonly code = "GMS_MALFORMED_JSON";
  readonly statusCode = 400;
  constructor(readonly problem: JsonSyntaxProblem | undefined) {
    super(
      problem
        ? `Malformed JSON body at line ${problem.line}, column ${problem.column} (offset ${problem.offset}): ` +
            `expected ${problem.expected}, found ${problem.found}`
        : "Malformed JSON body",
    );
  }
}

const STRUCTURAL = new Set(["{", "}", "[", "]", ":", ",", '"']);

/** The kind of the character at `offset`, naming it only when it is JSON punctuation. */
function describeAt(text: string, offset: number): string {
  if (offset >= text.length) return "end of body";
  const char = text[offset]!;
  const code = char.charCodeAt(0);
  if (STRUCTURAL.has(char)) return `'${char}'`;
  if (code < 0x20) return code === 0x0a || code === 0x0d ? "a line break" : "a control character";
  if (/\s/.test(char)) return "a space";
  if (/[0-9]/.test(char)) return "a digit";
  if (/\p{L}/u.test(char)) return "a letter";
  return "another character";
}

/**
 * The first syntax error of `text` as JSON (RFC 8259, as JSON.parse reads it), or undefined when it is
 * valid. One pass with an explicit stack: no recursion, whatever the nesting.
 */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  let i = 0;
  const fail = (expected: string, at = i): JsonSyntaxProblem => {
    let line = 1;
    let lineStart = 0;
    for (let k = 0; k < at && k < text.length; k++) {
      if (text.charCodeAt(k) === 0x0a) {
        line++;
        lineStart = k + 1;
      }
    }
    return { offset: at, line, column: at - lineStart + 1, expected, found: describeAt(text, at) };
  };
  const skipSpace = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const digits = (): number => {
    const start = i;
    while (i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    return i - start;
  };
  /** Reads one scalar or opens a container at `i`; returns a problem, "open" for a container, or undefined. */
  const value = (stack: string[]): JsonSyntaxProblem | "open" | undefined => {
    const char = text[i];
    if (char === "{" || char === "[") {
      stack.push(char);
      i++;
      return "open";
    }
    if (char === '"') return string();
    if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) {
      if (char === "-") i++;
      if (text[i] === "0") i++;
      else if (digits() === 0) return fail("a digit");
      if (text[i] === ".") {
        i++;
        if (digits() === 0) return fail("a digit after the decimal point");
      }
      if (text[i] === "e" || text[i] === "E") {
        i++;
        if (text[i] === "+" || text[i] === "-") i++;
        if (digits() === 0) return fail("a digit in the exponent");
      }
      return undefined;
    }
    for (const literal of ["true", "false", "null"]) {
      if (char === literal[0]) {
        for (let k = 0; k < literal.length; k++, i++) {
          if (text[i] !== literal[k]) return fail(`the literal ${literal}`, i - k);
        }
        return undefined;
      }
    }
    return fail("a JSON value (object, array, string, number, true, false or null)");
  };
  const string = (): JsonSyntaxProblem | undefined => {
    i++; // the opening quote
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail("a closing '\"' of the string (control characters must be escaped)");
      if (c === 0x5c) {
        const escaped = text[i + 1];
        if (escaped === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail("four hexadecimal digits after \\u", i + 2);
          i += 6;
        } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) {
          i += 2;
        } else {
          return fail('an escape (\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)', i + 1);
        }
      } else {
        i++;
      }
    }
    return fail("a closing '\"' of the string");
  };

  const stack: string[] = [];
  skipSpace();
  let problem = value(stack);
  if (problem && problem !== "open") return problem;
  // After a value or an opening bracket: what may follow depends on the innermost container.
  let justOpened = problem === "open";
  while (stack.length > 0) {
    skipSpace();
    const top = stack[stack.length - 1]!;
    if (justOpened) {
      justOpened = false;
      if (top === "{") {
        if (text[i] === "}") {
          stack.pop();
          i++;
          continue;
        }
        if (text[i] !== '"') return fail("a property name in double quotes or '}'");
      } else if (text[i] === "]") {
        stack.pop();
        i++;
        continue;
      }
    } else {
      // A value just ended inside `top`.
      if (text[i] === ",") {
        i++;
        skipSpace();
        if (top === "{" && text[i] !== '"') return fail("a property name in double quotes");
      } else if ((top === "{" && text[i] === "}") || (top === "[" && text[i] === "]")) {
        stack.pop();
        i++;
        continue;
      } else {
        return fail(top === "{" ? "',' or '}' after a property value" : "',' or ']' after an array element");
      }
    }
    // The next member: for an object a key and ':', then a value; for an array a value.
    skipSpace();
    if (top === "{") {
      const key = string();
      if (key) return key;
      skipSpace();
      if (text[i] !== ":") return fail("':' after a property name");
      i++;
      skipSpace();
    }
    problem = value(stack);
    if (problem === "open") justOpened = true;
    else if (problem) return problem;
  }
  skipSpace();
  return i < text.length ? fail("end of body after the JSON value") : undefined;
}
