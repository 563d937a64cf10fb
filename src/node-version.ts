/**
 * The Node.js this package needs, checked where a user would otherwise meet a raw error from an older one: the
 * emulator's CLI (node:sqlite) and LocalEngine (a TypeScript program run by stripping its types, undici).
 */
export const NODE_NEEDED = "22.19.0";

/** Whether `version` (`process.versions.node` form) is older than `NODE_NEEDED`. */
export function nodeTooOld(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const [neededMajor = 0, neededMinor = 0] = NODE_NEEDED.split(".").map(Number);
  return major < neededMajor || (major === neededMajor && minor < neededMinor);
}

/** How to get a Node.js new enough, for the messages that refuse an older one. */
export const NODE_ADVICE =
  `install Node.js ${NODE_NEEDED} or later (nodejs.org, or \`nvm install 22\`), or run the one command with ` +
  "`npx -p node@22 node <script>`";
