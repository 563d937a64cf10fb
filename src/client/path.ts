/**
 * Request paths are built only through this tag, so a guid or name can never smuggle in `/`, `?` or `#`.
 * The brand makes `GmsClient.request` refuse a plain concatenated string at compile time.
 */
declare const encoded: unique symbol;
export type EncodedPath = string & { readonly [encoded]: true };

/**
 * path`/apps/${guid}/actions`: every interpolated value is `encodeURIComponent`-ed; literal parts are kept.
 * A value that would change the route is refused: `/apps/${""}` would become the collection route
 * `/apps/`, and `encodeURIComponent` keeps `.` and `..` as they are, dot segments a URL resolves away
 * (`/apps/${".."}/actions` is `/actions`).
 */
export function path(strings: TemplateStringsArray, ...values: ReadonlyArray<string | number>): EncodedPath {
  return strings.reduce((built, literal, index) => {
    if (index >= values.length) return built + literal;
    return built + literal + encodeSegment(String(values[index]), built + literal);
  }, "") as EncodedPath;
}

/** `base` followed by one encoded segment: a record's path below its collection's. */
export function childPath(base: EncodedPath, segment: string): EncodedPath {
  return `${base}/${encodeSegment(segment, `${base}/`)}` as EncodedPath;
}

function encodeSegment(value: string, before: string): string {
  if (value === "" || value === "." || value === "..") {
    throw new TypeError(`path parameter ${JSON.stringify(value)} after "${before}" would change the route`);
  }
  return encodeURIComponent(value);
}
