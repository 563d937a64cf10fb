/**
 * The repository's GitHub Actions workflows: .github/workflows/release.yml, which releases a pushed tag `v<version>`
 * (the tag checked against package.json, each platform's executables built on a runner of that platform, the GitHub
 * release the schema's pluginDownloadURL names, then npm, PyPI and the Go module's tag), and ci.yml, which runs .ci/run.
 * What can be checked without GitHub: that they parse and are the workflows they say (triggers, jobs and what each
 * needs, the matrix, permissions, the files handed from job to job), that everything they run exists (npm scripts,
 * files, pinned actions), the Go module's tagging step run by bash on a throw-away clone, the tag check
 * (scripts/check-release-tag.mts) run as a child process, and actionlint on both when Go is installed (required
 * under CI=true, as .ci/run runs it too).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { changelogProblem } from "../../scripts/check-release-tag.mts";
import { PLATFORMS } from "../../scripts/dist/platforms.mts";
import { pinnedNodeVersion } from "../../scripts/dist/sea.mts";

const ROOT = join(__dirname, "..", "..");
const WORKFLOWS = join(ROOT, ".github", "workflows");
const CHECK_TAG = join(ROOT, "scripts", "check-release-tag.mts");

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
interface MatrixEntry {
  platform: string;
  runner: string;
}
interface Job {
  needs?: string | string[];
  "runs-on": string;
  "timeout-minutes"?: number;
  permissions?: Record<string, string>;
  environment?: string | { name: string; url?: string };
  strategy?: { matrix: { include: MatrixEntry[] } };
  defaults?: { run?: { shell?: string } };
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  concurrency: { group: string; "cancel-in-progress": boolean | string };
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
}

const load = (file: string) => parse(readFileSync(join(WORKFLOWS, file), "utf8")) as Workflow;
const release = load("release.yml");
const ci = load("ci.yml");
const workflows = { "release.yml": release, "ci.yml": ci };

const packageJson = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  scripts: Record<string, string>;
  repository: { url: string };
};

const stepsOf = (workflow: Workflow) => Object.values(workflow.jobs).flatMap((job) => job.steps);
const needsOf = (job: Job) => (job.needs === undefined ? [] : [job.needs].flat());
const scriptsOf = (workflow: Workflow) => stepsOf(workflow).flatMap((step) => (step.run === undefined ? [] : [step.run]));
const usesOf = (steps: Step[], action: string) => steps.filter((step) => step.uses?.split("@")[0] === action);

/** The one job of release.yml that `predicate` picks, by name. */
function releaseJob(what: string, predicate: (job: Job) => boolean): [string, Job] {
  const found = Object.entries(release.jobs).filter(([, job]) => predicate(job));
  if (found.length !== 1) throw new Error(`release.yml: one job ${what}, not ${found.length}: ${found.map(([name]) => name).join(", ")}`);
  return found[0]!;
}
const runs = (pattern: RegExp) => (job: Job) => job.steps.some((step) => step.run !== undefined && pattern.test(step.run));
const [checkName, checkJob] = releaseJob("checks the tag", runs(/npm run release:check-tag -- "\$GITHUB_REF_NAME"/));
const [matrixName, matrixJob] = releaseJob("has a matrix", (job) => job.strategy !== undefined);
const [releaseName, githubReleaseJob] = releaseJob("creates the GitHub release", runs(/\bgh release create\b/));
const [npmName, npmJob] = releaseJob("publishes to npm", runs(/\bnpm publish\b/));
const [pypiName, pypiJob] = releaseJob("publishes to PyPI", (job) => usesOf(job.steps, "pypa/gh-action-pypi-publish").length > 0);
const [goName, goJob] = releaseJob("tags the Go module", runs(/\bgit push\b/));

/** The `with` of the one step of `steps` that uses `action`. */
function withOf(steps: Step[], action: string): Record<string, unknown> {
  const found = usesOf(steps, action);
  expect(found, `one step uses ${action}`).toHaveLength(1);
  return found[0]!.with ?? {};
}

/** An artifact name or download pattern as a regular expression (`*` matches anything, as in actions/download-artifact). */
const artifactPattern = (pattern: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);

/** Runner.os of a GitHub-hosted runner label. */
function runnerOs(label: string): string {
  if (/^ubuntu-/.test(label)) return "Linux";
  if (/^macos-/.test(label)) return "macOS";
  if (/^windows-/.test(label)) return "Windows";
  throw new Error(`the test does not know the OS of the runner ${label}`);
}

/**
 * Whether a step runs on the runner of `entry`: its `if` of the form `runner.os == '<os>'` or `!=`, or none. Any other
 * condition is an error, so that the test knows every one it decides.
 */
function runsOn(step: Step, entry: MatrixEntry): boolean {
  if (step.if === undefined) return true;
  const found = /^(?:\$\{\{\s*)?runner\.os\s*(==|!=)\s*'(\w+)'(?:\s*\}\})?$/.exec(step.if.trim());
  if (!found) throw new Error(`the test does not evaluate the condition ${step.if}`);
  return (runnerOs(entry.runner) === found[2]) === (found[1] === "==");
}

describe("the workflows in .github/workflows", () => {
  it("parse, and each step of each job either runs a script or uses an action", () => {
    for (const [file, workflow] of Object.entries(workflows)) {
      expect(Object.keys(workflow.jobs).length, file).toBeGreaterThan(0);
      for (const [name, job] of Object.entries(workflow.jobs)) {
        expect(job.steps.length, `${file} ${name}`).toBeGreaterThan(0);
        for (const step of job.steps)
          expect([step.run, step.uses].filter(Boolean), `${file} ${name}: ${JSON.stringify(step)}`).toHaveLength(1);
      }
    }
  });

  it("run only npm scripts of package.json and files of the repository", () => {
    for (const [file, workflow] of Object.entries(workflows)) {
      const scripts = scriptsOf(workflow);
      const npmScripts = scripts.flatMap((script) => [...script.matchAll(/\bnpm run ([\w:.-]+)/g)].map(([, name]) => name!));
      const paths = scripts.flatMap((script) =>
        [...script.matchAll(/(?:^|[\s;&|(])(?:node|bash)\s+([^\s;&|)]+)/gm)]
          .map(([, path]) => path!)
          .filter((path) => !path.startsWith("-")),
      );
      expect(npmScripts.length + paths.length, `${file} runs something`).toBeGreaterThan(0);
      for (const name of npmScripts) expect(Object.keys(packageJson.scripts), `${file}: npm run ${name}`).toContain(name);
      for (const path of paths)
        expect(existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile(), `${file}: ${path} is a file`).toBe(true);
    }
  });

  it("pin every action to a version", () => {
    for (const [file, workflow] of Object.entries(workflows)) {
      const uses = stepsOf(workflow).flatMap((step) => (step.uses ? [step.uses] : []));
      expect(uses.length, file).toBeGreaterThan(0);
      for (const action of uses) expect(action, file).toMatch(/^[\w.-]+\/[\w.-]+(?:\/[\w./-]+)?@(?:v\d+(?:\.\d+){0,2}|[0-9a-f]{40})$/);
    }
  });

  it("set up the Node.js that the node devDependency pins, and Go and Python as the project builds with them", () => {
    const pinned = pinnedNodeVersion(ROOT);
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    for (const [file, workflow] of Object.entries(workflows)) {
      const steps = stepsOf(workflow);
      const nodes = usesOf(steps, "actions/setup-node");
      expect(nodes.length, file).toBeGreaterThan(0);
      for (const step of nodes) expect(String(step.with?.["node-version"]), file).toBe(pinned);
      for (const step of usesOf(steps, "actions/setup-go")) expect(step.with?.["go-version-file"], file).toBe("scripts/pulumi-cli/go.mod");
      for (const step of usesOf(steps, "actions/setup-python")) expect(step.with?.["python-version"], file).toBe("3.12");
    }
    expect(existsSync(join(ROOT, "scripts/pulumi-cli/go.mod"))).toBe(true);
  });

  it("are all linted by .ci/run with actionlint", () => {
    const line = /^go run github\.com\/rhysd\/actionlint\/cmd\/actionlint@v\d+\.\d+\.\d+ (.+)$/m.exec(
      readFileSync(join(ROOT, ".ci/run"), "utf8"),
    );
    expect(line, ".ci/run runs actionlint").not.toBeNull();
    const files = readdirSync(WORKFLOWS).map((name) => `.github/workflows/${name}`);
    expect(line![1]!.split(/\s+/).sort()).toEqual(files.sort());
  });
});

describe(".github/workflows/release.yml", () => {
  it("runs on a pushed tag v* only, one release of a tag at a time and never cancelled, every job within an hour", () => {
    expect(release.on).toEqual({ push: { tags: ["v*"] } });
    expect(release.concurrency.group).toContain("${{ github.ref }}");
    expect(release.concurrency["cancel-in-progress"]).toBe(false);
    for (const [name, job] of Object.entries(release.jobs)) {
      expect(job["timeout-minutes"], name).toBeGreaterThan(0);
      expect(job["timeout-minutes"], name).toBeLessThanOrEqual(60);
    }
  });

  it("checks the tag against package.json and CHANGELOG.md, and the schema against the last release's, before it builds anything", () => {
    const commands = checkJob.steps.flatMap((step) => (step.run ? [step.run.trim()] : []));
    expect(commands).toEqual(['npm run release:check-tag -- "$GITHUB_REF_NAME"', "npm run schema:compare"]);
  });

  it("checks the tag against package.json before it builds anything, then releases, then publishes", () => {
    expect(needsOf(release.jobs[checkName]!)).toEqual([]);
    expect(needsOf(matrixJob)).toEqual([checkName]);
    expect(needsOf(githubReleaseJob)).toEqual([matrixName]);
    for (const name of [npmName, pypiName, goName]) expect(needsOf(release.jobs[name]!), name).toEqual([releaseName]);
    expect(Object.keys(release.jobs).sort()).toEqual([checkName, matrixName, releaseName, npmName, pypiName, goName].sort());
  });

  it("builds each platform's executables on a runner of that platform", () => {
    expect(matrixJob.strategy!.matrix.include).toEqual([
      { platform: "linux-amd64", runner: "ubuntu-24.04" },
      { platform: "linux-arm64", runner: "ubuntu-24.04-arm" },
      { platform: "darwin-amd64", runner: "macos-15-intel" },
      { platform: "darwin-arm64", runner: "macos-14" },
      { platform: "windows-amd64", runner: "windows-2022" },
    ]);
    // The platforms the dist script builds, and no other.
    expect(matrixJob.strategy!.matrix.include.map((entry) => entry.platform)).toEqual(PLATFORMS.map((platform) => platform.name));
    expect(matrixJob["runs-on"]).toBe("${{ matrix.runner }}");
    expect(matrixJob.defaults?.run?.shell).toBe("bash");
    for (const entry of matrixJob.strategy!.matrix.include) {
      expect(entry.platform.split("-")[0], entry.runner).toBe(
        { Linux: "linux", macOS: "darwin", Windows: "windows" }[runnerOs(entry.runner)],
      );
      const steps = matrixJob.steps.filter((step) => runsOn(step, entry));
      const installs = steps.filter((step) => /\bnpm ci\b/.test(step.run ?? ""));
      const dists = steps.filter((step) => /\b(?:npm run dist|node scripts\/dist\.mts)\b/.test(step.run ?? ""));
      expect(installs, entry.platform).toHaveLength(1);
      expect(dists, entry.platform).toHaveLength(1);
      expect(steps.indexOf(installs[0]!), entry.platform).toBeLessThan(steps.indexOf(dists[0]!));
      const dist = dists[0]!.run!;
      expect(dist, entry.platform).toContain("--platform ${{ matrix.platform }}");
      expect(dist, entry.platform).toMatch(/--only executables$/m);
      if (entry.platform.startsWith("darwin-")) {
        // npm has no binary of the pinned node package there: no install scripts, and nothing run through npm scripts
        // (they would put that package's missing binary first on PATH): the compiler and the dist script directly.
        expect(installs[0]!.run, entry.platform).toMatch(/npm ci .*--ignore-scripts\n\s*node node_modules\/typescript\/bin\/tsc -p src\b/);
        expect(dist, entry.platform).toMatch(/^node scripts\/dist\.mts /);
      } else {
        expect(installs[0]!.run, entry.platform).not.toContain("--ignore-scripts");
        expect(dist, entry.platform).toMatch(/^npm run dist -- /);
      }
      expect(steps.indexOf(usesOf(steps, "actions/upload-artifact")[0]!), entry.platform).toBeGreaterThan(steps.indexOf(dists[0]!));
      // Go builds the converter beside pulumi-gms.
      expect(steps.indexOf(usesOf(steps, "actions/setup-go")[0]!), entry.platform).toBeLessThan(steps.indexOf(dists[0]!));
      expect(steps.indexOf(usesOf(steps, "actions/setup-go")[0]!), entry.platform).toBeGreaterThanOrEqual(0);
    }
    const upload = withOf(matrixJob.steps, "actions/upload-artifact");
    expect(upload.name).toBe("executables-${{ matrix.platform }}");
    expect(upload.path).toBe("release/*.tar.gz");
    expect(upload["if-no-files-found"]).toBe("error");
  });

  it("gathers every platform's tarballs, builds the SDKs and checksums.txt, and releases the tag with every file", () => {
    const steps = githubReleaseJob.steps;
    const download = withOf(steps, "actions/download-artifact");
    for (const entry of matrixJob.strategy!.matrix.include)
      expect(`executables-${entry.platform}`).toMatch(artifactPattern(String(download.pattern)));
    expect(["python-wheel", "go-module"].some((name) => artifactPattern(String(download.pattern)).test(name))).toBe(false);
    expect(download.path).toBe("release");
    expect(download["merge-multiple"]).toBe(true);
    expect(withOf(steps, "actions/setup-go")["go-version-file"]).toBe("scripts/pulumi-cli/go.mod");
    expect(withOf(steps, "actions/setup-python")["python-version"]).toBe("3.12");
    const at = (pattern: RegExp) => steps.findIndex((step) => step.run !== undefined && pattern.test(step.run));
    const install = at(/^npm ci\b/);
    const dist = at(/^npm run dist -- --only sdks,checksums$/);
    const create = at(/\bgh release create\b/);
    expect(install).toBeGreaterThan(steps.indexOf(usesOf(steps, "actions/download-artifact")[0]!));
    expect(dist).toBeGreaterThan(install);
    expect(create).toBeGreaterThan(dist);
    const createStep = steps[create]!;
    const attached = createStep.run!.replace(/\\\n/g, " ").trim().split(/\s+/);
    expect(attached.slice(0, 4)).toEqual(["gh", "release", "create", '"$GITHUB_REF_NAME"']);
    expect(attached).toEqual(expect.arrayContaining(["release/*.tar.gz", "release/checksums.txt", "release/python/*.whl"]));
    expect(createStep.env?.GH_TOKEN).toBe("${{ secrets.GITHUB_TOKEN }}");
    expect(githubReleaseJob.permissions).toEqual({ contents: "write" });
  });

  it("releases where the schema's pluginDownloadURL points: this repository's release of the tag v<version>", () => {
    const schema = JSON.parse(readFileSync(join(ROOT, "schema.json"), "utf8")) as { pluginDownloadURL: string };
    const repository = /github\.com\/([\w.-]+\/[\w.-]+?)(?:\.git)?$/.exec(packageJson.repository.url)?.[1];
    expect(repository).toBeDefined();
    // Either form the engine reads as the GitHub release of the tag v<version> of a repository: the release's own
    // download folder, or the github:// scheme, which finds the same asset through GitHub's API.
    expect([`https://github.com/${repository}/releases/download/v\${VERSION}`, `github://api.github.com/${repository}`]).toContain(
      schema.pluginDownloadURL,
    );
    // GitHub releases go to the workflow's repository, under the tag pushed (checked to be v<version> first).
    expect(scriptsOf(release).join("\n")).toContain('gh release create "$GITHUB_REF_NAME"');
  });

  it("publishes to npm, to PyPI and the Go module's tag, each with only the permissions it needs", () => {
    expect(release.permissions).toEqual({ contents: "read" });
    const npmPublish = npmJob.steps.find((step) => /\bnpm publish\b/.test(step.run ?? ""))!;
    expect(npmPublish.run).toBe("npm publish --provenance --access public");
    expect(npmPublish.env?.NODE_AUTH_TOKEN).toBe("${{ secrets.NPM_TOKEN }}");
    expect(withOf(npmJob.steps, "actions/setup-node")["registry-url"]).toBe("https://registry.npmjs.org");
    expect(npmJob.permissions).toEqual({ contents: "read", "id-token": "write" });

    // PyPI takes the wheel the release job built, by trusted publishing from the environment pypi.
    const wheelUpload = githubReleaseJob.steps.filter((step) => step.with?.path === "release/python/*.whl");
    expect(usesOf(wheelUpload, "actions/upload-artifact")).toHaveLength(1);
    const wheelDownload = withOf(pypiJob.steps, "actions/download-artifact");
    expect(wheelDownload.name).toBe(wheelUpload[0]!.with!.name);
    expect(wheelDownload.path).toBe("release/python/");
    expect(withOf(pypiJob.steps, "pypa/gh-action-pypi-publish")["packages-dir"]).toBe(wheelDownload.path);
    expect(typeof pypiJob.environment === "string" ? pypiJob.environment : pypiJob.environment?.name).toBe("pypi");
    expect(pypiJob.permissions).toEqual({ "id-token": "write" });

    // The Go module's tag is made of the module the release job generated.
    const goUpload = githubReleaseJob.steps.filter((step) => step.with?.path === "release/go/");
    expect(usesOf(goUpload, "actions/upload-artifact")).toHaveLength(1);
    const goDownload = withOf(goJob.steps, "actions/download-artifact");
    expect(goDownload.name).toBe(goUpload[0]!.with!.name);
    expect(goDownload.path).toBe("release/go/");
    expect(goJob.permissions).toEqual({ contents: "write" });

    // Only the release and the Go module's tag write to the repository.
    const writers = Object.entries(release.jobs).filter(([, job]) => job.permissions?.contents === "write");
    expect(writers.map(([name]) => name).sort()).toEqual([releaseName, goName].sort());
  });
});

const git = spawnSync("git", ["--version"], { encoding: "utf8" });
if (git.error && process.env.CI === "true")
  throw new Error(`test/release/workflows.test.ts: git is required under CI=true: ${git.error.message}`);
if (git.error)
  console.log(`test/release/workflows.test.ts: skipping the Go module's tagging step: git is not installed (${git.error.message})`);

describe.skipIf(git.error !== undefined)("release.yml's Go module step, run by bash on a clone of a tagged repository", () => {
  const step = goJob.steps.find((each) => /\bgit push\b/.test(each.run ?? ""))!;
  let work: string;
  const version = "0.1.0";
  const tag = `v${version}`;
  const env = () => ({
    ...process.env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: join(work, "gitconfig"),
    GITHUB_REF_NAME: tag,
  });
  const gitIn = (cwd: string, ...args: string[]) => {
    const run = spawnSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.com", ...args], {
      cwd,
      env: env(),
      encoding: "utf8",
    });
    expect(run.status, `git ${args.join(" ")}: ${run.stderr}`).toBe(0);
    return run.stdout.trim();
  };

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "gms-release-workflow-"));
    writeFileSync(join(work, "gitconfig"), "");
    gitIn(work, "init", "--quiet", "--bare", "--initial-branch=main", "origin.git");
    gitIn(work, "init", "--quiet", "--initial-branch=main", "repo");
    const repo = join(work, "repo");
    // As in main: the generated SDK and release/ are not in the repository.
    writeFileSync(join(repo, ".gitignore"), "/release/\n/sdk/\n");
    writeFileSync(join(repo, "package.json"), JSON.stringify({ version }));
    gitIn(repo, "add", ".");
    gitIn(repo, "commit", "--quiet", "-m", "the release");
    gitIn(repo, "tag", tag);
    gitIn(repo, "remote", "add", "origin", join(work, "origin.git"));
    gitIn(repo, "push", "--quiet", "origin", "main", tag);
    // As actions/checkout leaves a tag's push: the tagged commit, detached; and the module the release job generated.
    gitIn(repo, "checkout", "--quiet", "--detach", tag);
    mkdirSync(join(repo, "release", "go", "gms"), { recursive: true });
    writeFileSync(join(repo, "release", "go", "go.mod"), "module github.com/pulumi-gms/pulumi-gms/sdk/go\n\ngo 1.22\n");
    writeFileSync(join(repo, "release", "go", "gms", "provider.go"), "package gms\n");
    writeFileSync(join(repo, "release", "checksums.txt"), "not the module\n");
  });

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("pushes the tag sdk/go/v<version> on a commit on top of the tagged one holding the module in sdk/go/, and nothing else", () => {
    const origin = join(work, "origin.git");
    const mainBefore = gitIn(origin, "rev-parse", "main");
    const child = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run!], {
      cwd: join(work, "repo"),
      env: env(),
      encoding: "utf8",
    });
    expect(child.status, `${child.stdout}${child.stderr}`).toBe(0);
    const sdkTag = `sdk/go/v${version}`;
    expect(gitIn(origin, "rev-parse", `${sdkTag}^{commit}^`)).toBe(gitIn(origin, "rev-parse", `${tag}^{commit}`));
    expect(gitIn(origin, "ls-tree", "-r", "--name-only", sdkTag).split("\n").sort()).toEqual(
      [".gitignore", "package.json", "sdk/go/gms/provider.go", "sdk/go/go.mod"].sort(),
    );
    expect(gitIn(origin, "show", `${sdkTag}:sdk/go/go.mod`)).toMatch(/^module github\.com\/pulumi-gms\/pulumi-gms\/sdk\/go$/m);
    // No branch moves: main is as it was, and the pushed refs are the release's tag and the module's.
    expect(gitIn(origin, "rev-parse", "main")).toBe(mainBefore);
    expect(gitIn(origin, "for-each-ref", "--format=%(refname)").split("\n").sort()).toEqual(
      ["refs/heads/main", `refs/tags/${sdkTag}`, `refs/tags/${tag}`].sort(),
    );
  });
});

describe(".github/workflows/ci.yml", () => {
  it("runs .ci/run under CI=true on pull requests and pushes to main, in 90 minutes, a pull request's superseded runs cancelled", () => {
    expect(ci.on).toEqual({ pull_request: null, push: { branches: ["main"] } });
    const jobs = Object.values(ci.jobs);
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job["runs-on"]).toBe("ubuntu-24.04");
    expect(job["timeout-minutes"]).toBe(90);
    const run = job.steps.filter((step) => step.run !== undefined);
    expect(run.map((step) => step.run)).toEqual(["bash .ci/run"]);
    expect(run[0]!.env?.CI).toBe("true");
    expect(usesOf(job.steps, "actions/setup-go")).toHaveLength(1);
    expect(usesOf(job.steps, "actions/setup-python")).toHaveLength(1);
    expect(usesOf(job.steps, "actions/setup-node")).toHaveLength(1);
    // One group per pull request, cancelling its earlier run; a push to main has a group of its own commit.
    expect(ci.concurrency.group).toContain("github.event.pull_request.number");
    expect(ci.concurrency.group).toContain("github.sha");
    expect(ci.concurrency["cancel-in-progress"]).toBe("${{ github.event_name == 'pull_request' }}");
    expect(ci.permissions).toEqual({ contents: "read" });
  });
});

describe("scripts/check-release-tag.mts (npm run release:check-tag)", () => {
  const changelog = (...sections: string[]) => `# Changelog\n\nWhat changed.\n\n## Unreleased\n\n${sections.join("\n")}`;
  const DOCUMENTED = changelog("## 1.2.0 (2026-12-07)\n\n### Fixed\n\n- A fix.\n", "## 1.1.0\n\n- Older.\n");
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "gms-check-tag-"));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /**
   * The script run as the workflow runs it, on a checkout of its own whose package.json says `version` and whose
   * CHANGELOG.md is `text` (the repository's own may be ahead of its last release: package.json raised for a breaking
   * change, its entries still under Unreleased).
   */
  const checkTagIn = (version: string, text: string, ...args: string[]) => {
    const repo = mkdtempSync(join(work, "repo-"));
    mkdirSync(join(repo, "scripts"));
    writeFileSync(join(repo, "scripts", "check-release-tag.mts"), readFileSync(CHECK_TAG));
    writeFileSync(join(repo, "package.json"), JSON.stringify({ version }));
    writeFileSync(join(repo, "CHANGELOG.md"), text);
    return spawnSync(process.execPath, [join(repo, "scripts", "check-release-tag.mts"), ...args], { encoding: "utf8" });
  };

  it("is the npm script the release workflow runs", () => {
    expect(packageJson.scripts["release:check-tag"]).toBe("node scripts/check-release-tag.mts");
  });

  it("passes the tag v<package.json's version> when CHANGELOG.md has that version's section, saying both", () => {
    const run = checkTagIn("1.2.0", DOCUMENTED, "v1.2.0");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe("release tag v1.2.0 matches package.json's version 1.2.0, and CHANGELOG.md has its section\n");
  });

  it("fails another tag, naming both versions and what to do", () => {
    const other = "99.1.2";
    for (const tag of [`v${other}`, "1.2.0", "v1.2.0-rc.1"]) {
      const run = checkTagIn("1.2.0", DOCUMENTED, tag);
      expect(run.status, tag).toBe(1);
      expect(run.stderr, tag).toContain(tag);
      expect(run.stderr, tag).toContain("package.json's version 1.2.0");
      expect(run.stderr, tag).toContain("tag the release v1.2.0");
    }
    expect(checkTagIn("1.2.0", DOCUMENTED, `v${other}`).stderr).toContain(`npm version ${other}`);
  });

  it("is a usage error without a tag, or with more than one", () => {
    for (const args of [[], ["v1.0.0", "v2.0.0"]]) {
      const run = spawnSync(process.execPath, [CHECK_TAG, ...args], { cwd: ROOT, encoding: "utf8" });
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(/^usage: npm run release:check-tag -- <tag>/);
    }
  });

  describe("refuses a tag whose version CHANGELOG.md does not document", () => {
    it.each([
      ["a section with an entry", DOCUMENTED, undefined],
      ["a section with a line of prose", changelog("## 1.2.0\n\nThe first release with a plugin.\n"), undefined],
      ["no section of its own", changelog("## 1.1.0\n\n- Older.\n"), /has no section for 1\.2\.0\. Add a section `## 1\.2\.0 \(<date>\)`/],
      ["only a section of another version that starts alike", changelog("## 1.2.01\n\n- Other.\n"), /has no section for 1\.2\.0/],
      [
        "everything still under Unreleased",
        changelog().replace("## Unreleased\n", "## Unreleased\n\n- A change.\n"),
        /no section for 1\.2\.0/,
      ],
      ["an empty section", changelog("## 1.2.0 (2026-12-07)\n\n## 1.1.0\n\n- Older.\n"), /section for 1\.2\.0 is empty/],
      ["a section of headings only", changelog("## 1.2.0 (2026-12-07)\n\n### Added\n\n### Fixed\n"), /section for 1\.2\.0 is empty/],
      ["two sections of it", changelog("## 1.2.0\n\n- A.\n", "## 1.2.0\n\n- B.\n"), /has 2 sections for 1\.2\.0; keep one/],
    ] as const)("%s", (_what, text, problem) => {
      const found = changelogProblem(text, "1.2.0");
      if (problem === undefined) expect(found).toBeUndefined();
      else expect(found).toMatch(problem);
    });

    it("exits 1 with the reason, on a checkout whose CHANGELOG.md lacks the section", () => {
      const run = checkTagIn("1.2.0", changelog("## 1.1.0\n\n- Older.\n"), "v1.2.0");
      expect(run.status, run.stdout).toBe(1);
      expect(run.stderr).toContain("release tag v1.2.0: CHANGELOG.md has no section for 1.2.0.");
      expect(run.stderr).toContain("git push --delete origin v1.2.0");
    });
  });
});

/** `go run <actionlint>@<version>` as .ci/run runs it, so that the test and CI lint with the same version. */
const actionlint = /^go run (github\.com\/rhysd\/actionlint\/cmd\/actionlint@\S+) (.+)$/m.exec(readFileSync(join(ROOT, ".ci/run"), "utf8"));
const go = spawnSync("go", ["version"], { encoding: "utf8" });
if (go.error && process.env.CI === "true")
  throw new Error(`test/release/workflows.test.ts: Go is required under CI=true for actionlint: ${go.error.message}`);
if (go.error) console.log(`test/release/workflows.test.ts: skipping actionlint: go is not on PATH (${go.error.message})`);

describe.skipIf(go.error !== undefined)("actionlint", () => {
  it("finds nothing in either workflow", () => {
    expect(actionlint).not.toBeNull();
    const files = actionlint![2]!.split(/\s+/);
    expect(files.sort()).toEqual([".github/workflows/ci.yml", ".github/workflows/release.yml"]);
    // The first run downloads and compiles actionlint.
    const run = spawnSync("go", ["run", actionlint![1]!, ...files], { cwd: ROOT, encoding: "utf8", timeout: 290_000 });
    expect(run.error).toBeUndefined();
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  }, 300_000);
});
