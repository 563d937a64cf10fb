/**
 * The release's executables, one tarball of each per platform, each a single executable that brings its own Node.js
 * (scripts/dist/sea.mts), so that nothing else needs to be installed:
 * - `pulumi-resource-gms-v<version>-<os>-<arch>.tar.gz`, the provider plugin as Pulumi providers ship it: the
 *   executable `pulumi-resource-gms` (`.exe` on Windows) at its root, with LICENSE and a README.md. The engine
 *   downloads it by that name from the schema's `pluginDownloadURL`, and `pulumi plugin install resource gms <version>
 *   --file <tarball>` installs it by hand;
 * - `pulumi-gms-v<version>-<os>-<arch>.tar.gz`, the command-line tool (`discover`, `recover`, `emulator`, `migrate`)
 *   for teams that do not run Node.js, with `pulumi-gms-convert` beside it: the examples' converter
 *   (scripts/examplegen, a Go program built for the platform), which `discover --language` runs.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { CONVERTER } from "../../dist/discover/languages.js";
import { type DistContext, DistError, runStep } from "./context.mts";
import { cannotBuild, type Platform } from "./platforms.mts";
import { bundle, megabytes, pinnedNode, singleExecutable } from "./sea.mts";
import { gzippedTarball } from "./tar.mts";

interface Executable {
  /** The executable's file name (without `.exe`), and the first part of its tarball's. */
  readonly name: string;
  /** Its entry in src/. */
  readonly entry: string;
  /** The README.md beside it in the tarball. */
  readme(version: string, target: Platform): string;
  /** Executables beside it in the tarball, built for the platform into `work`: their paths. */
  companions?(context: DistContext, target: Platform, work: string): Promise<string[]>;
}

/** The converter `pulumi-gms discover --language` runs (src/discover/convert.ts names it), built by Go for `target`. */
async function converterFor(context: DistContext, target: Platform, work: string): Promise<string[]> {
  const file = join(work, target.name, `${CONVERTER}${target.executableSuffix}`);
  await runStep(
    "go",
    ["build", "-trimpath", "-ldflags=-s -w", "-o", file, "."],
    join(context.root, "scripts", "examplegen"),
    `building pulumi-gms-convert for ${target.name} (go build in scripts/examplegen)`,
    { ...process.env, GOOS: target.os, GOARCH: target.arch, CGO_ENABLED: "0" },
  );
  return [file];
}

export const PLUGIN: Executable = {
  name: "pulumi-resource-gms",
  entry: "src/plugin/main.ts",
  readme: (version, target) => `# pulumi-resource-gms ${version} (${target.name})

The Pulumi resource provider plugin of the gms package (generation management service workspaces): every kind as
\`gms:index:<Kind>\`, configured with \`gms:baseUrl\` and the secret \`gms:apiKey\`. A single executable that brings
its own Node.js runtime; nothing else needs to be installed.

The engine downloads it by itself on the first \`pulumi up\` of a program on the gms SDK. On a machine with no
network, install this file by hand:

    pulumi plugin install resource gms ${version} --file ${tarballName(PLUGIN, version, target)}
`,
};

export const CLI: Executable = {
  name: "pulumi-gms",
  entry: "src/cli/main.ts",
  readme: (version, target) => `# pulumi-gms ${version} (${target.name})

The command-line tool of the gms package: \`pulumi-gms discover\` (adopt an existing workspace), \`pulumi-gms recover\`
(settle what a killed \`pulumi up\` left), \`pulumi-gms emulator\` (the service on this machine) and
\`pulumi-gms migrate\`. A single executable that brings its own Node.js runtime; put it on PATH.

Keep \`${CONVERTER}\` beside it: \`pulumi-gms discover --language typescript|python|go\` runs it to write the
program that adopts a workspace in that language.

    pulumi-gms --help
`,
  companions: converterFor,
};

const EXECUTABLES = [PLUGIN, CLI] as const;

/** A tarball's name: `<executable>-v<version>-<os>-<arch>.tar.gz`, as the engine's download asks for the plugin's. */
export const tarballName = (executable: Executable, version: string, target: Platform) =>
  `${executable.name}-v${version}-${target.name}.tar.gz`;

/** Both tarballs for each of `targets`, into release/. */
export async function buildExecutables(context: DistContext, targets: readonly Platform[]): Promise<void> {
  const refused = targets.flatMap((target) => cannotBuild(target) ?? []);
  if (refused.length > 0) throw new DistError(refused.join("; "));
  const node = pinnedNode(context);
  const work = mkdtempSync(join(tmpdir(), "gms-dist-executables-"));
  try {
    for (const executable of EXECUTABLES) {
      const bundled = join(work, `${executable.name}.js`);
      await bundle(context, executable.entry, bundled);
      for (const target of targets) {
        const file = join(work, `${executable.name}-${target.name}${target.executableSuffix}`);
        await singleExecutable(context, node, target, bundled, file, work);
        const companions = (await executable.companions?.(context, target, work)) ?? [];
        const tarball = join(context.release, tarballName(executable, context.version, target));
        writeFileSync(
          tarball,
          gzippedTarball([
            { name: `${executable.name}${target.executableSuffix}`, mode: 0o755, data: readFileSync(file) },
            ...companions.map((companion) => ({ name: basename(companion), mode: 0o755, data: readFileSync(companion) })),
            { name: "LICENSE", mode: 0o644, data: readFileSync(join(context.root, "LICENSE")) },
            { name: "README.md", mode: 0o644, data: Buffer.from(executable.readme(context.version, target)) },
          ]),
        );
        for (const written of [file, ...companions]) rmSync(written);
        context.progress(`${relative(context.root, tarball)}: ${megabytes(tarball)}`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
