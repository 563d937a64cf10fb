/**
 * `npm run release:check-tag -- <tag>`: whether a release tag may be released, before the release workflow
 * (.github/workflows/release.yml) builds anything:
 * - the tag is `v` followed by package.json's version, so that no artefact is published under one version and a tag
 *   of another;
 * - CHANGELOG.md has a section of that version's own (`## <version>`, a date after it in parentheses if any) that says
 *   something: an entry, not only blank lines or `###` headings. A release's users read there what changed for them
 *   (docs/upgrading.md), so a tag without it is refused.
 * Exit 0 when both hold; 1, with what to do, when one does not; 2 on a usage error. Only Node.js's own modules are
 * used: the workflow runs it before installing anything.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const USAGE = "usage: npm run release:check-tag -- <tag>   (the tag is v<package.json's version>, e.g. v0.1.0)";
const ROOT = join(import.meta.dirname, "..");

/** Why CHANGELOG.md does not document `version`, or undefined when its section is there and says something. */
export function changelogProblem(changelog: string, version: string): string | undefined {
  const lines = changelog.split("\n");
  const heading = new RegExp(`^## ${version.replace(/[.+]/g, "\\$&")}(?:\\s+\\(.*\\))?\\s*$`);
  const starts = lines.flatMap((text, at) => (heading.test(text) ? [at] : []));
  const add = `Add a section \`## ${version} (<date>)\` to CHANGELOG.md (what was under \`## Unreleased\`) saying what the release changes for users`;
  if (starts.length === 0) return `CHANGELOG.md has no section for ${version}. ${add}, then tag again.`;
  if (starts.length > 1) return `CHANGELOG.md has ${starts.length} sections for ${version}; keep one.`;
  const start = starts[0]! + 1;
  const end = lines.findIndex((text, at) => at >= start && text.startsWith("## "));
  const body = lines.slice(start, end < 0 ? undefined : end);
  if (body.every((text) => text.trim() === "" || text.startsWith("### ")))
    return `CHANGELOG.md's section for ${version} is empty. Write in it what the release changes for users, then tag again.`;
  return undefined;
}

function main(args: string[]): number {
  if (args.length !== 1 || args[0] === "") {
    console.error(USAGE);
    return 2;
  }
  const tag = args[0]!;
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  const expected = `v${version}`;
  if (tag !== expected) {
    // Only a tag of the form v<semver> can be one that `npm version` makes, so only then is the bump offered.
    const tagged = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag)?.[1];
    const bump = tagged
      ? `either bump package.json with \`npm version ${tagged}\` (it commits and tags ${tag}) and push it with its tag, or `
      : "";
    console.error(
      `release tag ${tag} does not match package.json's version ${version}. ` +
        `Delete the tag (git push --delete origin ${tag}), then ${bump}tag the release ${expected}.`,
    );
    return 1;
  }
  const problem = changelogProblem(readFileSync(join(ROOT, "CHANGELOG.md"), "utf8"), version);
  if (problem) {
    console.error(`release tag ${tag}: ${problem} (Delete the tag first: git push --delete origin ${tag}.)`);
    return 1;
  }
  console.log(`release tag ${tag} matches package.json's version ${version}, and CHANGELOG.md has its section`);
  return 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
