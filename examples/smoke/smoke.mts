/**
 * `npm run smoke`: deploy a small workspace with pulumi-gms, smoke-test it through the service's REST API,
 * destroy it. Offline: no Pulumi CLI, no account, no network.
 *
 * 1. starts the emulator on a SQLite file in a fresh temp directory (`gms-smoke-*` under the OS temp dir,
 *    removed at the end; `--keep` keeps it), seeded with examples/smoke/fixtures.yaml (`--fixtures FILE`
 *    seeds it from another file, which must hold the App "Greeter" and its Action "Greet" too);
 * 2. deploys examples/smoke/program (an App, a provider connection, a Model, a Dataset) through the offline engine
 *    (`pulumi-gms/testing`), from a copy with the built package installed as a copy;
 * 3. reads the deployed objects back, then runs the fixtures' Action "Greet" (synchronous, in another
 *    environment, streaming, asynchronous), in a Session, and leaves Feedback on a run's Data record,
 *    all with plain `fetch`;
 * 4. destroys the deployment and checks through the API that its objects are gone.
 *
 * It prints one line per check (PASS or FAIL) and a summary, and exits non-zero when a check fails. The
 * API key and the provider key never reach the output.
 *
 *   npm run smoke            (builds first)      node examples/smoke/smoke.mts [--keep] [--fixtures FILE]   (after a build)
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type RunningEmulator, startEmulator } from "pulumi-gms/emulator";
import { LocalEngine, installPackageCopy } from "pulumi-gms/testing";

const HERE = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const KEEP = args.includes("--keep");
const fixturesAt = args.indexOf("--fixtures");
const fixturesArg = fixturesAt < 0 ? undefined : args[fixturesAt + 1];
if (fixturesAt >= 0 && !fixturesArg) {
  console.error("usage: node examples/smoke/smoke.mts [--keep] [--fixtures FILE]");
  process.exit(2);
}
const FIXTURES = fixturesArg ? resolve(fixturesArg) : join(HERE, "fixtures.yaml");
const PROVIDER_KEY = "sk-smoke-0001-not-a-real-key";
/** The run's input and the text the Action's prompt, `Hello {{name}}, welcome to {{place}}.`, renders from it. */
const INPUT = { name: "Linus", place: "Helsinki" };
const EXPECTED = "Hello Linus, welcome to Helsinki.";
/** The Data records of "Greeter" in the fixtures, which the Dataset copies. */
const FIXTURE_RECORDS = 2;

const work = mkdtempSync(join(tmpdir(), "gms-smoke-"));
const programDir = join(work, "program");
const PROGRAM = join(HERE, "program");
let secrets: string[] = [PROVIDER_KEY];

/** Prints a line with every secret the smoke test knows replaced by [secret]. */
function say(line: string): void {
  console.log(secrets.reduce((text, secret) => text.split(secret).join("[secret]"), line));
}

const results: boolean[] = [];

/** Runs one check and prints its line: PASS with what it saw, or FAIL with why. */
async function check(name: string, run: () => Promise<string>): Promise<void> {
  try {
    const detail = await run();
    results.push(true);
    say(`PASS  ${name}: ${detail}`);
  } catch (error) {
    results.push(false);
    say(`FAIL  ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** What an earlier check should have produced; a check that lacks it fails saying so. */
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`skipped: no ${what} (an earlier check failed)`);
  return value;
}

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    throw new Error(`${what} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
}

interface Reply {
  status: number;
  body: any;
}

/** A REST call with the API key; `target` is a path under `/v1` or an absolute URL the service handed out. */
async function call(emulator: RunningEmulator, method: string, target: string, body?: unknown): Promise<Reply> {
  const response = await fetch(target.startsWith("http") ? target : `${emulator.url}${target}`, {
    method,
    headers: { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The body of a 200 answer; any other status fails the check with the status and the `detail`. */
async function ok(emulator: RunningEmulator, method: string, target: string, body?: unknown): Promise<any> {
  const reply = await call(emulator, method, target, body);
  if (reply.status !== 200) throw new Error(`${method} ${target} answered ${reply.status}: ${JSON.stringify(reply.body?.detail)}`);
  return reply.body;
}

/** The Data GUID a feedback URL (`.../feedback/<data guid>`) names. */
const dataOf = (feedbackUrl: string) => feedbackUrl.slice(feedbackUrl.lastIndexOf("/") + 1);

/** The tokens of a server-sent event stream (`data: {"token": ...}` each), checking it ends with `data: END_STREAM`. */
function streamTokens(text: string): string[] {
  const events = text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice("data: ".length));
  if (events.pop() !== "END_STREAM") throw new Error("the stream does not end with data: END_STREAM");
  return events.map((event) => (JSON.parse(event) as { token: string }).token);
}

async function main(): Promise<void> {
  const emulator = await startEmulator({ db: join(work, "gms-smoke.db"), port: 0, fixtures: FIXTURES });
  secrets = [...secrets, emulator.apiKey];
  say(`smoke: emulator at ${emulator.url}, fixtures ${FIXTURES}`);
  cpSync(PROGRAM, programDir, { recursive: true, filter: (source) => !source.startsWith(join(PROGRAM, "node_modules")) });
  installPackageCopy(programDir);
  const engine = new LocalEngine({
    programDir,
    stateFile: join(work, "state", "smoke.json"),
    project: "gms-smoke",
    stack: "smoke",
    config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, providerKey: { secret: PROVIDER_KEY } },
    secretsPassphrase: "gms-smoke-passphrase",
    log: () => undefined,
  });

  const deployed: Record<string, string> = {};
  let actionGuid: string | undefined;
  let syncData: string | undefined;
  let feedbackUrl: string | undefined;
  const run = (body: Record<string, unknown>) =>
    ok(emulator, "POST", "/actions/", { action: need(actionGuid, "Action GUID"), input: INPUT, ...body });

  try {
    await check("deploy", async () => {
      const result = await engine.up();
      for (const [name, output] of Object.entries(result.outputs)) deployed[name] = output.value as string;
      expectEqual(result.counts.create, 4, "the resources created");
      actionGuid = need(deployed.actionGuid, "Action Greet of Greeter");
      return "4 resources created (App, ProviderConnection, Model, Dataset); Action Greet looked up";
    });

    await check("read back", async () => {
      const app = await ok(emulator, "GET", `/apps/${need(deployed.appGuid, "App")}`);
      expectEqual(app.name, "Smoke test", "the App's name");
      const connection = await ok(emulator, "GET", `/providers/${need(deployed.connectionGuid, "connection")}`);
      expectEqual(connection.nickname, "OpenAI (smoke test)", "the connection's nickname");
      if (JSON.stringify(connection).includes(PROVIDER_KEY)) throw new Error("the connection answers its key");
      await ok(emulator, "GET", `/models/${need(deployed.modelGuid, "Model")}`);
      expectEqual(deployed.modelConnection, deployed.connectionGuid, "the Model's connection");
      const records = await ok(emulator, "GET", `/datasets/${need(deployed.datasetGuid, "Dataset")}/data`);
      expectEqual(records.length, FIXTURE_RECORDS, "the Dataset's Data records");
      return `App, connection (key not answered), Model linked to it, Dataset of ${records.length} Data records`;
    });

    await check("run synchronous", async () => {
      const answer = await run({});
      feedbackUrl = answer.feedback_url as string;
      syncData = dataOf(feedbackUrl);
      expectEqual(answer.msg, EXPECTED, "msg");
      expectEqual(answer.streaming, false, "streaming");
      const data = await ok(emulator, "GET", `/data/${syncData}`);
      expectEqual(data.output, EXPECTED, "the logged Data record's output");
      expectEqual(data.metadata?.environment, "Production", "the logged environment");
      return `"${answer.msg}", logged as Data ${syncData} (Production)`;
    });

    await check("run environments", async () => {
      const staging = await run({ environment: "Staging" });
      expectEqual(staging.msg, EXPECTED, "msg in Staging");
      const preview = await call(emulator, "POST", "/actions/", {
        action: need(actionGuid, "Action GUID"),
        input: INPUT,
        environment: "Preview",
      });
      expectEqual(preview, { status: 400, body: { detail: "Action is not deployed to Preview" } }, "a run in Preview");
      return "Staging answers the same text; Preview is refused (400, not deployed there)";
    });

    await check("run streaming", async () => {
      const answer = await run({ streaming: true });
      expectEqual([answer.msg, answer.streaming], ["", true], "msg and streaming");
      // A signed URL: opened without the API key, as the official client's EventSource does.
      const response = await fetch(answer.streaming_url as string);
      if (response.status !== 200) throw new Error(`the streaming URL answered ${response.status}`);
      const tokens = streamTokens(await response.text());
      expectEqual(tokens.join(""), EXPECTED, "the streamed text");
      return `${tokens.length} tokens, then END_STREAM; joined they are the text`;
    });

    await check("run asynchronous", async () => {
      const answer = await run({ async_mode: true });
      expectEqual(answer.msg, "", "msg");
      const generation = await ok(emulator, "GET", answer.result_url as string);
      expectEqual([generation.guid, generation.status, generation.msg], [answer.generation_guid, "SUCCESS", EXPECTED], "the result");
      return `generation ${generation.guid} read at its result URL: SUCCESS, with the text`;
    });

    await check("session", async () => {
      const session = await ok(emulator, "POST", "/sessions", {
        action: need(actionGuid, "Action GUID"),
        name: "Smoke session",
        extUserId: "smoke-user",
      });
      const answer = await run({ session: session.guid });
      expectEqual(answer.msg, EXPECTED, "msg in the Session");
      const data = await ok(emulator, "GET", `/sessions/${session.guid}/data`);
      expectEqual(
        data.data.map((record: { guid: string }) => record.guid),
        [dataOf(answer.feedback_url)],
        "the Session's Data",
      );
      return `Session ${session.guid} holds the run's Data record`;
    });

    await check("feedback", async () => {
      const feedback = await ok(emulator, "POST", need(feedbackUrl, "feedback URL"), { type: "rating", value: 2, source: "smoke-test" });
      expectEqual([feedback.data, feedback.type, feedback.value], [need(syncData, "Data GUID"), "rating", 2], "the Feedback");
      const read = await ok(emulator, "GET", `/feedback/${feedback.guid}`);
      expectEqual(read.data, syncData, "the Feedback read back");
      return `positive rating ${feedback.guid} on Data ${syncData}`;
    });

    await check("destroy", async () => {
      const result = await engine.destroy();
      expectEqual(result.counts.delete, 4, "the resources deleted");
      const routes = [
        `/apps/${deployed.appGuid}`,
        `/providers/${deployed.connectionGuid}`,
        `/models/${deployed.modelGuid}`,
        `/datasets/${deployed.datasetGuid}`,
      ];
      for (const route of routes) expectEqual((await call(emulator, "GET", route)).status, 404, `GET ${route}`);
      return "4 resources deleted; each answers 404";
    });
  } finally {
    await emulator.close();
  }
  const failed = results.filter((passed) => !passed).length;
  say(`smoke: ${results.length - failed} of ${results.length} checks passed${failed > 0 ? `, ${failed} failed` : ""}`);
  if (failed > 0) process.exitCode = 1;
}

main()
  .then(
    () => undefined,
    (error: unknown) => {
      say(`smoke: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  )
  .finally(() => {
    if (KEEP) say(`kept ${work} (database, program, state)`);
    else rmSync(work, { recursive: true, force: true });
  });
