/**
 * The release's executables, one tarball of each per platform, each a single executable that brings its own Node.js
 * (scripts/dist/sea.mts), so that nothing else needs to be installed:
 * - `pulumi-resource-gms-v<version>-<os>-<arch>.tar.gz`, the provider plugin as Pulumi providers ship it: the
 *   executable `pulumi-resource-gms` (`.exe` on Windows) at its root, with LICENSE and a README.md. The engine
 *   downloads it by that name from the schema's `pluginDownloadURL`, and `pulumi plugin install resource gms <version>
 *   --file <tarball>` installs it by hand;
 * - `pulumi-gms-v<version>-<os>-<arch>.tar.gz`, the command-line tool (`discover`, `recover`, `emulator`, `migrate`)
 *   for teams that do not run Node.js.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { type DistContext, DistError } from "./context.mts";
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

    pulumi-gms --help
`,
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
        const tarball = join(context.release, tarballName(executable, context.version, target));
        writeFileSync(
          tarball,
          gzippedTarball([
            { name: `${executable.name}${target.executableSuffix}`, mode: 0o755, data: readFileSync(file) },
            { name: "LICENSE", mode: 0o644, data: readFileSync(join(context.root, "LICENSE")) },
            { name: "README.md", mode: 0o644, data: Buffer.from(executable.readme(context.version, target)) },
          ]),
        );
        rmSync(file);
        context.progress(`${relative(context.root, tarball)}: ${megabytes(tarball)}`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
