/**
 * This package's package.json, read once: its version is the plugin's (GetPluginInfo), schema.json's and the one the
 * native classes ask the engine for, and goes in the client's user agent. A `require` of the file rather than an
 * import (which would pull a file outside rootDir into the build); a bundler follows it, so the release's executable
 * carries the file. It sits one level up from both src/ and dist/.
 */
export const packageManifest = require("../package.json") as {
  name: string;
  version: string;
  license: string;
  engines: { node: string };
  repository: { url: string };
};

/** The GitHub repository that publishes the releases, `<org>/<repo>`, from package.json's `repository`. */
export const releaseRepository: string = (() => {
  const match = /github\.com[/:]([^/]+\/[^/.]+)/.exec(packageManifest.repository.url);
  if (!match) throw new Error(`package.json's repository (${packageManifest.repository.url}) is not a GitHub repository`);
  return match[1]!;
})();

/**
 * Where the engine downloads the plugin from (schema.json's `pluginDownloadURL`, which every SDK sends with its
 * resources): the GitHub releases of the repository, one a version, whose assets are the plugin's tarballs
 * (`pulumi-resource-gms-v<version>-<os>-<arch>.tar.gz`). The `github://` form rather than an `https://` one with
 * `${VERSION}` in it: `pulumi import` writes the URL into a program it generates, where `${...}` would be read as
 * an interpolation and the import's code generation fails.
 */
export const pluginDownloadURL = `github://api.github.com/${releaseRepository}`;

/**
 * The Go SDK's module, in the repository that publishes the releases (tag `sdk/go/v<version>`): what `go get` names.
 * Its root package, `gms`, is what a Go program imports (schema.json's `language.go.importBasePath`, from which the
 * generator takes the module path: the import path less its last element).
 */
export const goModule = `github.com/${releaseRepository}/sdk/go`;
export const goImportPath = `${goModule}/gms`;
