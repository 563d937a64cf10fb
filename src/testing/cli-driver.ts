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
import { gmsPlaceholders } from "../provider/window";
import { StackIdsFile } from "./host";

function send(message: CliDriverMessage): Promise<void> {
  return new Promise((resolve) => process.send!(message, () => resolve()));
}

/**
 * The program's module, run as `pulumi-language-nodejs` would (a default export function's result, else the
 * named exports), failing when anything it started failed. The Automation API's language server (SDK 3.270,
 * automation/server.js) tells the engine that the program finished once the SDK's requests drain, even when it
 * caught an unhandled rejection meanwhile (an input or a lookup that failed), and the engine then deletes every
 * resource the program did not get to register. So the program waits for those requests itself and throws the
 * first such failure: the engine sees a failed program and deletes nothing, as with `pulumi-language-nodejs`.
 */
async function runProgram(entry: string, sdk: typeof import("@pulumi/pulumi")): Promise<Record<string, unknown> | undefined> {
  const { waitForRPCs } = sdk.runtime as unknown as { waitForRPCs?: () => Promise<void> };
  if (typeof waitForRPCs !== "function") throw new Error("This @pulumi/pulumi has no runtime.waitForRPCs, which the CLI driver needs");
  const failures: unknown[] = [];
  const record = (error: unknown) => failures.push(error);
  process.on("unhandledRejection", record);
  process.on("uncaughtException", record);
  try {
    const exports = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
    const { default: main, ...named } = exports;
    const outputs = typeof main === "function" ? ((await main()) as Record<string, unknown> | undefined) : named;
    await waitForRPCs();
    // A rejection of the last turn is reported after it: let it arrive.
    await new Promise((resolve) => setImmediate(resolve));
    if (failures.length > 0) throw failures[0];
    return outputs;
  } finally {
    process.off("unhandledRejection", record);
    process.off("uncaughtException", record);
  }
}

async function run(job: CliDriverJob): Promise<void> {
  const fromProgram = createRequire(join(job.programDir, "package.json"));
  const auto: typeof automation = fromProgram("@pulumi/pulumi/automation");
  const sdk: typeof import("@pulumi/pulumi") = fromProgram("@pulumi/pulumi");
  const pulumiCommand = await auto.PulumiCommand.get(job.cliRoot ? { root: job.cliRoot } : {});
  const stack = await auto.LocalWorkspace.createOrSelectStack(
    { stackName: job.stack, projectName: job.project, program: () => runProgram(join(job.programDir, job.program), sdk) },
    { workDir: job.programDir, pulumiCommand, secretsProvider: "passphrase" },
  );
  await stack.setAllConfig(job.config);
  // The provider learns the id of every resource of the state as it is before the operation (a placeholder
  // never takes one of them): the CLI hands the provider host its own environment.
  const stackIds = new StackIdsFile(gmsPlaceholders.stackIdsVariable);
  if (job.operation !== "preview") {
    const exported = (await stack.exportStack()) as { deployment?: { resources?: { id?: string }[] } };
    stackIds.write((exported.deployment?.resources ?? []).map((resource) => resource.id));
    Object.assign(process.env, stackIds.env);
  }
  try {
    await runOperation(job, stack);
  } finally {
    stackIds.remove();
  }
}

async function runOperation(job: CliDriverJob, stack: automation.Stack): Promise<void> {
  const onOutput = (text: string) => void send({ kind: "output", text });
  const onEvent = (event: automation.EngineEvent) => void send({ kind: "event", event });
  const common = {
    onOutput,
    onEvent,
    color: "never" as const,
    ...(job.parallel ? { parallel: job.parallel } : {}),
    ...(job.debug ? { debug: true } : {}),
  };
  let outputs: automation.OutputMap | undefined;
  const expect = job.expectNoChanges ? { expectNoChanges: true } : {};
  switch (job.operation) {
    case "preview":
      await stack.preview({ ...common, ...expect, diff: false });
      break;
    case "up":
      outputs = (await stack.up({ ...common, ...(job.continueOnError ? { continueOnError: true } : {}) })).outputs;
      break;
    case "refresh":
      await stack.refresh({ ...common, ...expect });
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
