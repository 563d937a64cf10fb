/**
 * What the suites on the real Pulumi CLI share: finding the CLI (the project's `.pulumi-cli/bin`, built by
 * `npm run pulumi:install`, else `pulumi` on PATH), skipping with a printed reason when there is none
 * (required under CI=true: `.ci/run` installs it first), and a throw-away program directory with the
 * built package installed as a copy, as a user's `npm install` leaves it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PulumiCli, findPulumiCli, installPackageCopy } from "../../src/testing";

const lookup = findPulumiCli();

/**
 * The CLI for the suite in `file`, or undefined after printing why its real-engine tests skip. Under
 * CI=true a missing CLI fails the suite instead: CI installs it, so its absence is a broken install.
 */
export function pulumiCliFor(file: string): PulumiCli | undefined {
  if (lookup.found) return lookup.cli;
  if (process.env.CI === "true") throw new Error(`${file}: the real Pulumi CLI is required under CI=true: ${lookup.reason}`);
  console.log(`${file}: skipping the runs on the real Pulumi CLI: ${lookup.reason}`);
  return undefined;
}

/** A description suffix naming the CLI a suite runs on. */
export const cliName = (cli: PulumiCli | undefined) =>
  cli ? `pulumi ${cli.version} (${cli.source === "project" ? ".pulumi-cli" : "PATH"})` : "absent";

/** A fresh program directory (an ES module package) with `index.ts` as given and the built package copied in. */
export function makeProgramDir(prefix: string, program?: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `${prefix}-program`, private: true, type: "module" }));
  if (program !== undefined) writeFileSync(join(dir, "index.ts"), program);
  installPackageCopy(dir);
  return dir;
}
