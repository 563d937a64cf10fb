/**
 * This package's package.json, read once: its version is the plugin's (GetPluginInfo), schema.json's and the one the
 * native classes ask the engine for, and goes in the client's user agent. A `require` of the file rather than an
 * import (which would pull a file outside rootDir into the build); a bundler follows it, so the release's executable
 * carries the file. It sits one level up from both src/ and dist/.
 */
export const packageManifest = require("../package.json") as { name: string; version: string; description: string; license: string };
