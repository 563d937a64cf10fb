/**
 * `npm run release:check-tag -- <tag>`: whether a release tag is `v` followed by package.json's version, so that the
 * release workflow (.github/workflows/release.yml) never publishes artefacts under one version and a tag of another.
 * Exit 0 when they match; 1, with what to do, when they differ; 2 on a usage error.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const USAGE = "usage: npm run release:check-tag -- <tag>   (the tag is v<package.json's version>, e.g. v0.1.0)";

const args = process.argv.slice(2);
if (args.length !== 1 || args[0] === "") {
  console.error(USAGE);
  process.exit(2);
}
const tag = args[0]!;
const { version } = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as { version: string };
const expected = `v${version}`;

if (tag === expected) {
  console.log(`release tag ${tag} matches package.json's version ${version}`);
  process.exit(0);
}
// Only a tag of the form v<semver> can be one that `npm version` makes, so only then is the bump offered.
const tagged = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag)?.[1];
const bump = tagged
  ? `either bump package.json with \`npm version ${tagged}\` (it commits and tags ${tag}) and push it with its tag, or `
  : "";
console.error(
  `release tag ${tag} does not match package.json's version ${version}. ` +
    `Delete the tag (git push --delete origin ${tag}), then ${bump}tag the release ${expected}.`,
);
process.exit(1);
