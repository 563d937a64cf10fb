/**
 * `npm run dist`: the release, written into the git-ignored folder `release/`:
 * - for each platform, the provider plugin's and the command-line tool's tarballs, single executables that need no
 *   Node.js (scripts/dist/executables.mts);
 * - the SDKs generated from schema.json: `python/*.whl` and the Go module `go/` (scripts/dist/sdks.mts);
 * - `checksums.txt`, the SHA-256 of every artefact (scripts/dist/checksums.mts).
 *
 *   npm run dist [-- --platform <os-arch>[,<os-arch>...]] [--only executables|sdks|checksums[,...]]
 *
 * With no `--platform`, the executables are built for every platform this machine can build them for (every one but
 * macOS's, which only macOS can sign; on macOS, all five). With no `--only`, all three parts are built into an
 * emptied release/; `--only` builds those parts and leaves the other files as they are, which is how the release
 * workflow gathers the platforms' tarballs built on their own runners. Each step prints a line; a failed step stops
 * the run with exit 1 and says what is missing; a bad option exits 2.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { writeChecksums } from "./dist/checksums.mts";
import type { DistContext } from "./dist/context.mts";
import { buildExecutables } from "./dist/executables.mts";
import { buildableHere, PLATFORMS, type Platform, platformNamed } from "./dist/platforms.mts";
import { buildSdks } from "./dist/sdks.mts";

const root = resolve(import.meta.dirname, "..");
const release = join(root, "release");
const started = Date.now();

const PARTS = ["executables", "sdks", "checksums"] as const;
type Part = (typeof PARTS)[number];

class UsageError extends Error {
  override readonly name = "UsageError";
}

const USAGE = `usage: npm run dist [-- --platform <os-arch>[,...]] [--only ${PARTS.join("|")}[,...]]
platforms: ${PLATFORMS.map((platform) => platform.name).join(", ")}`;

/** `--platform` and `--only` may each be repeated, and each value may list several, comma-separated. */
const OPTIONS = {
  platform: { type: "string", multiple: true },
  only: { type: "string", multiple: true },
} as const;

function parseOptions(argv: string[]): { parts: Part[]; platforms: Platform[] } {
  let values: { platform?: string[]; only?: string[] };
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const list = (given: string[] | undefined) => given?.flatMap((value) => value.split(","));
  const parts = (list(values.only) ?? [...PARTS]).map((part) => {
    if (!(PARTS as readonly string[]).includes(part)) throw new UsageError(`--only takes ${PARTS.join(", ")}, not ${part}\n${USAGE}`);
    return part as Part;
  });
  const platforms = (list(values.platform) ?? buildableHere().map((platform) => platform.name)).map((name) => {
    const platform = platformNamed(name);
    if (!platform) throw new UsageError(`--platform takes ${PLATFORMS.map((known) => known.name).join(", ")}, not ${name}\n${USAGE}`);
    return platform;
  });
  return { parts, platforms };
}

async function main(argv: string[]): Promise<void> {
  const { parts, platforms } = parseOptions(argv);
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
  if (parts.length === PARTS.length) rmSync(release, { recursive: true, force: true });
  mkdirSync(release, { recursive: true });
  const context: DistContext = {
    root,
    release,
    version,
    progress: (line) => console.log(`dist [${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`),
  };
  if (parts.includes("executables")) {
    context.progress(`the executables for ${platforms.map((platform) => platform.name).join(", ")}`);
    await buildExecutables(context, platforms);
  }
  if (parts.includes("sdks")) await buildSdks(context);
  if (parts.includes("checksums")) await writeChecksums(context);
  context.progress(`release/ holds the ${parts.join(", ")} of pulumi-gms ${version}`);
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  console.error(`dist: ${error instanceof Error && error.name !== "Error" ? error.message : (error as Error).stack}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
