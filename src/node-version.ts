/**
 * The Node.js this package needs: package.json's `engines.node` (`>=X.Y.Z`), the one place the version is written. Every
 * entry point refuses an older one in one line naming it, before loading what would fail there with a raw error
 * (node:sqlite for the emulator, undici for every request, a TypeScript program run by stripping its types): the
 * command-line tool prints the line and exits 1 (src/cli/main.ts), the module entries throw it (./node-guard.ts).
 */
import { packageManifest } from "./manifest";

/** The lowest version `engines.node` allows, e.g. `22.19.0`. */
export const NODE_NEEDED: string = (() => {
  const range = packageManifest.engines.node;
  const lowest = /^>=\s*(\d+\.\d+\.\d+)$/.exec(range);
  if (!lowest) throw new Error(`package.json's engines.node is "${range}", not the ">=X.Y.Z" form this package reads`);
  return lowest[1]!;
})();

/** Whether `version` (`process.versions.node` form) is older than `NODE_NEEDED`. */
export function nodeTooOld(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0, patch = 0] = version.split(".").map(Number);
  const [neededMajor = 0, neededMinor = 0, neededPatch = 0] = NODE_NEEDED.split(".").map(Number);
  return major !== neededMajor ? major < neededMajor : minor !== neededMinor ? minor < neededMinor : patch < neededPatch;
}

/** How to get a Node.js new enough, for the messages that refuse an older one. */
export const NODE_ADVICE =
  `install Node.js ${NODE_NEEDED} or later (nodejs.org, or \`nvm install ${NODE_NEEDED.split(".")[0]}\`), or run the one command ` +
  `with \`npx -p node@${NODE_NEEDED.split(".")[0]} node <script>\``;

/** The one line that refuses this Node.js (`what` is what refuses it: `pulumi-gms`, `LocalEngine`, ...). */
export const nodeRefusal = (what: string, version: string = process.versions.node): string =>
  `${what} needs Node.js ${NODE_NEEDED} or later, and this is v${version}: ${NODE_ADVICE}`;

/** Thrown by a module entry of the package loaded on a Node.js older than `NODE_NEEDED`. */
export class NodeVersionError extends Error {
  override readonly name = "NodeVersionError";
  readonly code = "ERR_GMS_NODE_VERSION";
}

/** Throws NodeVersionError, whose message is nodeRefusal's one line, when `version` is older than `NODE_NEEDED`. */
export function requireSupportedNode(what: string, version: string = process.versions.node): void {
  if (nodeTooOld(version)) throw new NodeVersionError(nodeRefusal(what, version));
}
