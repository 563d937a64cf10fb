/**
 * A Pulumi project on the real CLI whose resources the plugin serves: a throw-away folder holding the project
 * (`program/`), a file backend, the CLI's home, and a `bin/` that puts the built plugin on PATH as
 * `pulumi-resource-gms`, the way the engine finds a provider plugin. `pulumi(...)` runs the CLI in the project
 * without blocking, since the emulator the project talks to answers from this process.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { cliEnvironment, type PulumiCli } from "../../src/testing";
import { pulumiCliFor } from "../pulumi-cli/harness";

/**
 * The CLI for a suite of YAML projects, when the YAML language host (`pulumi-language-yaml`, which `npm run
 * pulumi:install` builds beside the CLI) is there too; else undefined after printing why the suite skips.
 * Under CI=true a missing CLI or host fails the suite instead.
 */
export function yamlCliFor(file: string): PulumiCli | undefined {
  const cli = pulumiCliFor(file);
  if (!cli || existsSync(join(cli.dir, "pulumi-language-yaml"))) return cli;
  const reason = `no pulumi-language-yaml beside ${cli.bin} (npm run pulumi:install builds it)`;
  if (process.env.CI === "true") throw new Error(`${file}: the YAML language host is required under CI=true: ${reason}`);
  console.log(`${file}: skipping the YAML projects: ${reason}`);
  return undefined;
}

export interface CliProject {
  /** The project's folder. */
  dir: string;
  /** The throw-away folder holding it (removed by close): room for what the project uses beside it. */
  root: string;
  /** Runs `pulumi args...` in the project (non-interactive, no colour); resolves with its output, rejects when it fails. */
  pulumi(...args: string[]): Promise<string>;
  /** As `pulumi`, resolving with what the CLI wrote on stdout apart (`--json` output, say) and everything it printed. */
  pulumiStdout(...args: string[]): Promise<{ stdout: string; printed: string }>;
  /** Replaces the project's Pulumi.yaml. */
  write(projectYaml: string): void;
  /** The project's Pulumi.yaml. */
  read(): string;
  /** `pulumi stack init <stack>`, then `pulumi config set` of each setting (`{ secret }` with `--secret`). */
  initStack(stack: string, config: Record<string, string | { secret: string }>): Promise<void>;
  close(): void;
}

/** `env` adds to this process's environment; its PULUMI_CONFIG_PASSPHRASE, when given, is the stack's (else one made from `prefix`). */
export function startCliProject(cli: PulumiCli, prefix: string, projectYaml: string, env: NodeJS.ProcessEnv = {}): CliProject {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const dir = join(root, "program");
  for (const folder of [dir, join(root, "bin"), join(root, "state")]) mkdirSync(folder);
  const plugin = join(__dirname, "..", "..", "dist", "plugin", "main.js");
  chmodSync(plugin, 0o755);
  symlinkSync(plugin, join(root, "bin", "pulumi-resource-gms"));
  const base = { ...process.env, ...env, PATH: [join(root, "bin"), process.env.PATH ?? ""].join(delimiter) };
  const cliEnv = cliEnvironment(
    cli,
    { backendDir: join(root, "state"), passphrase: env.PULUMI_CONFIG_PASSPHRASE ?? `${prefix}-passphrase`, pulumiHome: join(root, "home") },
    base,
  );
  const write = (text: string) => writeFileSync(join(dir, "Pulumi.yaml"), text);
  const read = () => readFileSync(join(dir, "Pulumi.yaml"), "utf8");
  write(projectYaml);
  /** Resolves with what the CLI wrote on stdout and everything it printed. */
  const run = (args: string[]) =>
    new Promise<{ stdout: string; printed: string }>((resolve, reject) => {
      const child = spawn(cli.bin, [...args, "--non-interactive", "--color", "never"], { cwd: dir, env: cliEnv });
      let stdout = "";
      let printed = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (printed += chunk.toString("utf8")));
      child.on("error", reject);
      child.on("close", (code) =>
        code === 0 ? resolve({ stdout, printed }) : reject(new Error(`pulumi ${args.join(" ")} exited ${code}:\n${printed}`)),
      );
    });
  const pulumi = async (...args: string[]) => (await run(args)).printed;
  return {
    dir,
    root,
    write,
    read,
    pulumi,
    pulumiStdout: (...args: string[]) => run(args),
    async initStack(stack, config) {
      await pulumi("stack", "init", stack);
      for (const [key, value] of Object.entries(config))
        await (typeof value === "string" ? pulumi("config", "set", key, value) : pulumi("config", "set", "--secret", key, value.secret));
    },
    close: () => rmSync(root, { recursive: true, force: true }),
  };
}
