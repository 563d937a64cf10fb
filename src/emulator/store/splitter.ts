/**
 * The text splitter shared by Document create (content longer than one chunk becomes several Documents)
 * and Context Source processing (a loaded file becomes the Documents of its Context).
 */
import type { Splitting } from "../../api/context-sources";
import { BadRequestError } from "./errors";

// Spec: the splitter configuration's shape is not shown; the emulator uses `{ chunk_size, chunk_overlap }`
// in characters, defaulting to 1000 and 0.
export const DEFAULT_SPLITTER: Splitting = { chunkSize: 1000, chunkOverlap: 0 };

/** Where a chunk prefers to end, best first: a paragraph, a line, a word. */
const SEPARATORS = ["\n\n", "\n", " "];

/**
 * Cuts `text` into chunks of at most `chunkSize` characters, each (but the first) starting `chunkOverlap`
 * characters before the end of the previous one. A chunk ends after the last paragraph break, else line
 * break, else space inside its window, and only hard-cuts a window without any. Chunks keep their
 * separators, so with no overlap they join back to exactly the text. Empty text gives no chunks.
 */
export function splitText(text: string, { chunkSize, chunkOverlap }: Splitting): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + chunkSize, text.length);
    if (end < text.length) end = breakPoint(text, start, end, chunkOverlap);
    chunks.push(text.slice(start, end));
    if (end >= text.length) break;
    const next = keepPair(text, end - chunkOverlap);
    start = next > start ? next : end - chunkOverlap;
  }
  return chunks;
}

/** The end of a chunk starting at `start` with a window ending at `limit`, leaving progress past the overlap. */
function breakPoint(text: string, start: number, limit: number, overlap: number): number {
  const window = text.slice(start, limit);
  for (const separator of SEPARATORS) {
    const at = window.lastIndexOf(separator);
    if (at > 0 && at + separator.length > overlap) return start + at + separator.length;
  }
  // A hard cut must not split a surrogate pair, unless the window is that one pair's first half.
  const end = keepPair(text, limit);
  return end - start > overlap ? end : limit;
}

/** Moves a cut that would fall between the halves of a surrogate pair one back. */
function keepPair(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/**
 * Validates a splitter configuration from the wire (`chunk_size` a positive integer, `chunk_overlap` a
 * non-negative integer below it, 0 when absent); other keys are dropped. Anything else is 400.
 */
export function parseSplitterConfig(value: Record<string, unknown>): Splitting {
  const chunkSize = value.chunk_size;
  const chunkOverlap = value.chunk_overlap ?? 0;
  if (!Number.isInteger(chunkSize) || !Number.isInteger(chunkOverlap)) throw new BadRequestError("invalid splitter configuration");
  const size = chunkSize as number;
  const overlap = chunkOverlap as number;
  if (size < 1 || overlap < 0 || overlap >= size) throw new BadRequestError("invalid splitter configuration");
  return { chunkSize: size, chunkOverlap: overlap };
}
