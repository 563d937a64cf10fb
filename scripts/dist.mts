/**
 * `npm run dist`: the release, written into the git-ignored folder `release/` (emptied first):
 * - `pulumi-resource-gms-v<version>-linux-amd64.tar.gz`, the provider plugin as `pulumi plugin install` takes it,
 *   an executable that needs no Node.js (scripts/dist/plugin.mts);
 * - the SDKs generated from schema.json: `python/*.whl` and the Go module `go/` (scripts/dist/sdks.mts).
 *
 *   npm run dist [-- --only plugin|sdks]
 *
 * `--only` builds one part and leaves the other's files as they are. Each step prints a line; a failed step stops
 * the run with exit 1 and says what is missing.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildPluginTarball } from "./dist/plugin.mts";
import type { DistContext } from "./dist/context.mts";
import { buildSdks } from "./dist/sdks.mts";

const root = resolve(import.meta.dirname, "..");
const release = join(root, "release");
const started = Date.now();

const parts = { plugin: buildPluginTarball, sdks: buildSdks } as const;
type Part = keyof typeof parts;

function partsWanted(argv: string[]): Part[] {
  const at = argv.indexOf("--only");
  if (at === -1) return Object.keys(parts) as Part[];
  const wanted = argv[at + 1];
  if (wanted !== "plugin" && wanted !== "sdks") throw new UsageError(`--only takes plugin or sdks, not ${wanted ?? "nothing"}`);
  return [wanted];
}

class UsageError extends Error {
  override readonly name = "UsageError";
}

async function main(argv: string[]): Promise<void> {
  const wanted = partsWanted(argv);
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
  if (wanted.length === Object.keys(parts).length) rmSync(release, { recursive: true, force: true });
  mkdirSync(release, { recursive: true });
  const context: DistContext = {
    root,
    release,
    version,
    progress: (line) => console.log(`dist [${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`),
  };
  for (const part of wanted) await parts[part](context);
  context.progress(`release/ holds the ${wanted.join(" and ")} of pulumi-gms ${version}`);
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  console.error(`dist: ${error instanceof Error && error.name !== "Error" ? error.message : (error as Error).stack}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
