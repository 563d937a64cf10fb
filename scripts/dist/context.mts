/** What each part of `npm run dist` (scripts/dist.mts) is given. */
export interface DistContext {
  /** The package's root folder. */
  root: string;
  /** `release/` under it, made before the part runs. */
  release: string;
  /** The package's version (package.json), which the plugin and the SDKs carry. */
  version: string;
  /** Prints a progress line. */
  progress(line: string): void;
}

/** A failure of a step that says what is missing and how to get it (printed without a stack). */
export class DistError extends Error {
  override readonly name = "DistError";
}
