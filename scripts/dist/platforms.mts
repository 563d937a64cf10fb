/**
 * The platforms Pulumi providers ship for, in the engine's words (`<os>-<arch>`, as in the names of the tarballs the
 * engine downloads) and in Node.js's (the single executables are copies of Node.js binaries): the one table the
 * release's names, the Node.js binaries and the build machine's reach are read from.
 */

export interface Platform {
  /** `<os>-<arch>` as the engine names it: the suffix of every tarball of the release. */
  readonly name: string;
  /** The engine's OS and CPU words (Go's GOOS and GOARCH). */
  readonly os: "linux" | "darwin" | "windows";
  readonly arch: "amd64" | "arm64";
  /** Node.js's `process.platform` and `process.arch` on it. */
  readonly nodePlatform: NodeJS.Platform;
  readonly nodeArch: "x64" | "arm64";
  /** What an executable's file name ends with there. */
  readonly executableSuffix: "" | ".exe";
}

const platform = (os: Platform["os"], arch: Platform["arch"]): Platform => ({
  name: `${os}-${arch}`,
  os,
  arch,
  nodePlatform: os === "windows" ? "win32" : os,
  nodeArch: arch === "amd64" ? "x64" : "arm64",
  executableSuffix: os === "windows" ? ".exe" : "",
});

// biome-ignore format: one platform a line
export const PLATFORMS: readonly Platform[] = [
  platform("linux", "amd64"),
  platform("linux", "arm64"),
  platform("darwin", "amd64"),
  platform("darwin", "arm64"),
  platform("windows", "amd64"),
];

/** The platform named `<os>-<arch>`, or undefined. */
export const platformNamed = (name: string): Platform | undefined => PLATFORMS.find((candidate) => candidate.name === name);

/** The platform this process runs on, or undefined where providers do not ship (a 32-bit machine, say). */
export const hostPlatform = (): Platform | undefined =>
  PLATFORMS.find((candidate) => candidate.nodePlatform === process.platform && candidate.nodeArch === process.arch);

/**
 * Why this machine cannot build `target`'s executables, or undefined when it can. A macOS executable must be signed
 * (ad hoc at least: Apple silicon kills an unsigned one, and the injection breaks the signature Node.js came with), and
 * `codesign` runs only on macOS; every other platform's executable is a copy of that platform's Node.js binary, which
 * npm serves as a package, with the blob injected.
 */
export function cannotBuild(target: Platform): string | undefined {
  if (target.os === "darwin" && process.platform !== "darwin")
    return `${target.name}: a macOS executable must be signed with codesign, which runs only on macOS; build it there`;
  return undefined;
}

/** The platforms `npm run dist` builds on this machine when none is named. */
export const buildableHere = (): Platform[] => PLATFORMS.filter((target) => cannotBuild(target) === undefined);
