/**
 * Where the real Pulumi CLI is, and the environment it runs in here: the project's own build
 * (`npm run pulumi:install`, `.pulumi-cli/bin`) first, else `pulumi` on PATH, with the dynamic-provider
 * launcher `pulumi-resource-pulumi-nodejs` beside it (the CLI starts it for every dynamic resource).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { packageRoot } from "./program-dir";

export interface PulumiCli {
  /** The `pulumi` executable. */
  bin: string;
  /** Its folder, which holds the launcher too (the CLI finds plugins on PATH and beside itself). */
  dir: string;
  /** What `pulumi version` prints, e.g. `v3.274.1`. */
  version: string;
  /** `project`: `.pulumi-cli/bin` of this package; `PATH`: the user's own. */
  source: "project" | "PATH";
}

export type CliLookup = { found: true; cli: PulumiCli } | { found: false; reason: string };

const LAUNCHER = "pulumi-resource-pulumi-nodejs";

/**
 * The Pulumi CLI to run: `<root>/.pulumi-cli/bin/pulumi` when `npm run pulumi:install` built it, else
 * `pulumi` on the PATH of `env`. Not found, the reason says what was looked at and how to install one.
 */
export function findPulumiCli(options: { root?: string; env?: NodeJS.ProcessEnv } = {}): CliLookup {
  const env = options.env ?? process.env;
  const own = join(options.root ?? packageRoot(), ".pulumi-cli", "bin", "pulumi");
  const candidates: [string, PulumiCli["source"]][] = [];
  if (existsSync(own)) candidates.push([own, "project"]);
  candidates.push(["pulumi", "PATH"]);
  const failures: string[] = [];
  for (const [bin, source] of candidates) {
    const probe = spawnSync(bin, ["version"], { encoding: "utf8", env: { ...env, PULUMI_SKIP_UPDATE_CHECK: "true" } });
    if (probe.error || probe.status !== 0) {
      failures.push(`${source === "project" ? own : "pulumi on PATH"}: ${probe.error?.message ?? probe.stderr.trim()}`);
      continue;
    }
    const path = source === "project" ? own : which(bin, env);
    const dir = dirname(path);
    if (!existsSync(join(dir, LAUNCHER))) {
      failures.push(`${path} has no ${LAUNCHER} beside it, which the CLI starts for dynamic resources`);
      continue;
    }
    return { found: true, cli: { bin: path, dir, version: probe.stdout.trim(), source } };
  }
  return {
    found: false,
    reason: `no Pulumi CLI (${failures.join("; ")}); \`npm run pulumi:install\` builds one from its Go modules into .pulumi-cli/`,
  };
}

/** The file `name` resolves to on PATH (`name` itself when it holds a slash). */
function which(name: string, env: NodeJS.ProcessEnv): string {
  if (name.includes("/")) return name;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return name;
}

export interface CliSandbox {
  /** The file backend's folder (`PULUMI_BACKEND_URL=file://<folder>`). */
  backendDir: string;
  /** Encrypts the stack's secrets (the passphrase secrets provider). */
  passphrase: string;
  /** The CLI's home (plugins, workspace settings); keep it apart from the user's `~/.pulumi`. */
  pulumiHome: string;
}

/**
 * The environment the CLI runs in: a file backend, the passphrase secrets provider, no update check and no
 * plugin download (it reaches nothing but what the program and the provider call), its own home, and a
 * PATH that puts the CLI's folder (the launcher) and this process's Node.js first: the launcher runs the
 * dynamic-provider host with the `node` it finds on PATH.
 */
export function cliEnvironment(cli: PulumiCli, sandbox: CliSandbox, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...base,
    PATH: [cli.dir, dirname(process.execPath), base.PATH ?? ""].join(delimiter),
    PULUMI_BACKEND_URL: `file://${sandbox.backendDir}`,
    PULUMI_CONFIG_PASSPHRASE: sandbox.passphrase,
    PULUMI_HOME: sandbox.pulumiHome,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
}
