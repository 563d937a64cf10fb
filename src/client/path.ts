/**
 * Request paths are built only through this tag, so a guid or name can never smuggle in `/`, `?` or `#`.
 * The brand makes `GmsClient.request` refuse a plain concatenated string at compile time.
 */
declare const encoded: unique symbol;
export type EncodedPath = string & { readonly [encoded]: true };

/**
 * path`/apps/${guid}/actions`: every interpolated value is `encodeURIComponent`-ed; literal parts are kept.
 * An empty value is refused: `/apps/${""}` would silently become the collection route `/apps/`.
 */
export function path(strings: TemplateStringsArray, ...values: ReadonlyArray<string | number>): EncodedPath {
  return strings.reduce((built, literal, index) => {
    if (index >= values.length) return built + literal;
    const value = String(values[index]);
    if (value === "") throw new TypeError(`empty path parameter after "${built + literal}"`);
    return built + literal + encodeURIComponent(value);
  }, "") as EncodedPath;
}

/** `base` followed by one encoded segment: a record's path below its collection's. */
export function childPath(base: EncodedPath, segment: string): EncodedPath {
  if (segment === "") throw new TypeError(`empty path segment after "${base}"`);
  return `${base}/${encodeURIComponent(segment)}` as EncodedPath;
}
