/**
 * What the benchmarks that run the provider plugin on the real CLI share (test/bench/plugin.mts, test/bench/noisy.mts):
 * a Pulumi YAML project of N Apps in a sandbox of its own (program, file backend, PULUMI_HOME), `pulumi` run in it,
 * the release's plugin installed there from its tarball, and the stack made against an emulator.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { cliEnvironment, PulumiCli } from "../../dist/testing/index.js";
import type { PluginRelease } from "../release/artefacts.mts";

/** The CLI's sandbox settings (a file backend, its passphrase and PULUMI_HOME), as cliEnvironment takes them. */
type CliSandbox = Parameters<typeof cliEnvironment>[1];

export const BENCH_KEY = "gms_bench_plugin_key";

/** A project the CLI runs: where, and in what environment. */
export interface YamlProject {
  name: string;
  /** The sandbox: `program/` (Pulumi.yaml), `state/` (the file backend), `home/` (PULUMI_HOME). */
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** The project: N Apps, nothing else. */
export function projectYaml(n: number): string {
  const lines = ["name: gms-bench-plugin", "runtime: yaml", "resources:"];
  for (let i = 0; i < n; i++)
    lines.push(`  app-${i}:`, "    type: gms:index:App", "    properties:", `      name: bench ${i}`, "      description: bench");
  return `${lines.join("\n")}\n`;
}

/** A sandbox `<parent>/<name>` holding the project of `apps` Apps; the CLI's environment in it is the caller's to make. */
export function yamlSandbox(parent: string, name: string, apps: number): { dir: string; sandbox: CliSandbox } {
  const dir = join(parent, name);
  mkdirSync(dir);
  for (const folder of ["program", "state", "home"]) mkdirSync(join(dir, folder));
  writeFileSync(join(dir, "program", "Pulumi.yaml"), projectYaml(apps));
  return { dir, sandbox: { backendDir: join(dir, "state"), passphrase: "bench", pulumiHome: join(dir, "home") } };
}

/** Runs `pulumi args...` in the project; its wall time and output. Rejects when it fails. */
export function pulumi(project: YamlProject, cli: PulumiCli, args: string[], started?: (pid: number) => void) {
  return new Promise<{ seconds: number; output: string }>((resolve, reject) => {
    const begun = process.hrtime.bigint();
    const child = spawn(cli.bin, [...args, "--non-interactive", "--color", "never"], {
      cwd: join(project.dir, "program"),
      env: project.env,
    });
    if (child.pid) started?.(child.pid);
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => {
      const seconds = Number(process.hrtime.bigint() - begun) / 1e9;
      if (code === 0) resolve({ seconds, output });
      else reject(new Error(`${project.name}: pulumi ${args.join(" ")} exited ${code}:\n${output}`));
    });
  });
}

/** The gms resource plugins `pulumi plugin ls` lists in the project's PULUMI_HOME, by version. */
export async function installedVersions(project: YamlProject, cli: PulumiCli): Promise<string[]> {
  const listed = JSON.parse((await pulumi(project, cli, ["plugin", "ls", "--json"])).output) as {
    name: string;
    kind: string;
    version: string;
  }[];
  return listed.filter((entry) => entry.name === "gms" && entry.kind === "resource").map((entry) => entry.version);
}

/** Installs the release's plugin from its tarball into the project's PULUMI_HOME, and checks it is the only gms there. */
export async function installRelease(project: YamlProject, cli: PulumiCli, release: PluginRelease): Promise<void> {
  await pulumi(project, cli, ["plugin", "install", "resource", "gms", release.version, "--file", release.tarball]);
  const versions = await installedVersions(project, cli);
  if (JSON.stringify(versions) !== JSON.stringify([release.version]))
    throw new Error(
      `${project.name}: pulumi plugin ls lists gms ${JSON.stringify(versions)}, expected ${JSON.stringify([release.version])}`,
    );
}

/** The project's stack `bench`, configured for the service at `url` with the bench's key. */
export async function initStack(project: YamlProject, cli: PulumiCli, url: string): Promise<void> {
  await pulumi(project, cli, ["stack", "init", "bench"]);
  await pulumi(project, cli, ["config", "set", "gms:baseUrl", url]);
  await pulumi(project, cli, ["config", "set", "--secret", "gms:apiKey", BENCH_KEY]);
}
