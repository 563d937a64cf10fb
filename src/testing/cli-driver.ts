/**
 * The child process of `PulumiCliEngine` (forked per operation, cwd = the program directory): it runs one
 * operation of the real Pulumi CLI through the Automation API of the program's own `@pulumi/pulumi`, with
 * the program as an inline program (the SDK's language server runs it in this process, and the CLI
 * connects to it: no `pulumi-language-nodejs` is needed). It sends the CLI's output, its engine events and
 * the result to the parent over IPC. The job, secrets included, arrives as the first IPC message, never on
 * the command line.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as automation from "@pulumi/pulumi/automation";
import type { CliDriverJob, CliDriverMessage } from "./cli-engine";

function send(message: CliDriverMessage): Promise<void> {
  return new Promise((resolve) => process.send!(message, () => resolve()));
}

/** The program's module, run as `pulumi-language-nodejs` would: a default export function's result, else the named exports. */
async function runProgram(entry: string): Promise<Record<string, unknown> | undefined> {
  const exports = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
  if (typeof exports.default === "function") return (await exports.default()) as Record<string, unknown> | undefined;
  const { default: _default, ...named } = exports;
  return named;
}

async function run(job: CliDriverJob): Promise<void> {
  const auto: typeof automation = createRequire(join(job.programDir, "package.json"))("@pulumi/pulumi/automation");
  const pulumiCommand = await auto.PulumiCommand.get(job.cliRoot ? { root: job.cliRoot } : {});
  const stack = await auto.LocalWorkspace.createOrSelectStack(
    { stackName: job.stack, projectName: job.project, program: () => runProgram(join(job.programDir, job.program)) },
    { workDir: job.programDir, pulumiCommand, secretsProvider: "passphrase" },
  );
  await stack.setAllConfig(job.config);
  const onOutput = (text: string) => void send({ kind: "output", text });
  const onEvent = (event: automation.EngineEvent) => void send({ kind: "event", event });
  const common = { onOutput, onEvent, color: "never" as const, ...(job.parallel ? { parallel: job.parallel } : {}) };
  let outputs: automation.OutputMap | undefined;
  switch (job.operation) {
    case "preview":
      await stack.preview({ ...common, diff: false });
      break;
    case "up":
      outputs = (await stack.up({ ...common, ...(job.continueOnError ? { continueOnError: true } : {}) })).outputs;
      break;
    case "refresh":
      await stack.refresh(common);
      break;
    case "destroy":
      await stack.destroy(common);
      break;
  }
  await send({ kind: "done", ...(outputs ? { outputs } : {}) });
}

process.once("message", (job: CliDriverJob) => {
  run(job).then(
    () => process.disconnect(),
    async (error: unknown) => {
      await send({ kind: "failed", error: error instanceof Error ? error.message : String(error) });
      process.disconnect();
    },
  );
});
