#!/usr/bin/env node
/**
 * gms-emulator [--host 127.0.0.1] [--port 4000] [--db FILE | --db :memory:] [--fixtures FILE] [--api-key KEY]
 *              [--workspace NAME --api-key KEY ...] [--log] [--faults SPEC] [--public-url URL] [--finetune-seconds N]
 *              [--clock-offset MS]
 */
import { parseArgs } from "node:util";
import { NODE_ADVICE, NODE_NEEDED, nodeTooOld } from "../node-version";
import { type FaultSpec, formatFaultSpec, parseFaultSpec } from "./faults";
import { normalizePublicUrl } from "./routes/origin";

const USAGE =
  "usage: gms-emulator [--host 127.0.0.1] [--port 4000] [--db FILE | --db :memory:] [--fixtures FILE] [--api-key KEY]\n" +
  "                    [--workspace NAME --api-key KEY ...] [--log] [--faults SPEC] [--public-url URL] [--finetune-seconds N]\n" +
  "                    [--clock-offset MS]";

const WORKSPACE_HELP = `--api-key KEY     without --workspace: the default workspace's key (generated and printed when left out)
--workspace NAME  a workspace to have, with the --api-key that follows it; repeat the pair for more
                  (e.g. --workspace Acme --api-key gms_acme --workspace Beta --api-key gms_beta). A workspace
                  an earlier run made in the same --db keeps its records and gains the key.`;

const PUBLIC_URL_HELP = `--public-url URL  the address clients reach the emulator at, without /v1 (e.g. https://gms.test or
                  http://proxy/gms): signed file URLs and Workflow result URLs are built from it. Default: the
                  address the emulator listens on (never the request's Host header).`;

const FINE_TUNE_HELP = `--finetune-seconds N  seconds a fine-tune stays processing after its create (default 3; 0: finished at the
                      first read). It then ends failed when its base model's name contains "fail", else succeeded.`;

const CLOCK_HELP = `--clock-offset MS  milliseconds the service's clock is ahead of this machine's, negative when behind (write
                   --clock-offset=-300000 for five minutes behind): record timestamps and the Date header follow it.`;

const FAULTS_HELP = `--faults SPEC   seeded fault injection on the /v1 API routes (not signed file downloads), key=value pairs
                joined by commas, all optional:
                  seed=<integer>             generator seed (default 1): same seed + same request order = same faults
                  error=<fraction>           answer 5xx before the handler (status=<5xx>, default 503)
                  throttle=<fraction>        answer 429 with Retry-After (retry-after=<seconds>, default 1)
                  reset=<fraction>           destroy the connection before the handler
                  lost=<fraction>            run the handler, then destroy the connection instead of answering
                  late=<fraction>            destroy the connection, then run the handler after the client has gone
                                             (late-by=<ms>|<min>-<max>, default 1000), never after the request's
                                             deadline (deadline=<ms>, default 60000, at least late-by)
                  latency=<ms>|<min>-<max>   delay every subject request
                  latency-at=request|answer  spend it before the handler (default) or after it, before the answer
                  methods=<M>[+<M>...]       methods subject to faults (default all)
                e.g. --faults seed=7,error=0.05,throttle=0.05,retry-after=0,lost=0.02`;

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string", default: "4000" },
        db: { type: "string", default: "gms-emulator.db" },
        fixtures: { type: "string" },
        "api-key": { type: "string", multiple: true },
        workspace: { type: "string", multiple: true },
        log: { type: "boolean", default: false },
        faults: { type: "string" },
        "public-url": { type: "string" },
        "finetune-seconds": { type: "string" },
        "clock-offset": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n\n${WORKSPACE_HELP}\n\n${FAULTS_HELP}\n\n${PUBLIC_URL_HELP}\n\n${FINE_TUNE_HELP}\n\n${CLOCK_HELP}\n`);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port must be a whole number from 0 to 65535\n${USAGE}\n`);
    process.exit(2);
  }
  const rawFineTuneSeconds = values["finetune-seconds"];
  // Number("") is 0: an empty value is refused rather than read as 0.
  const fineTuneSeconds = rawFineTuneSeconds?.trim()
    ? Number(rawFineTuneSeconds)
    : rawFineTuneSeconds === undefined
      ? undefined
      : Number.NaN;
  if (fineTuneSeconds !== undefined && !(Number.isFinite(fineTuneSeconds) && fineTuneSeconds >= 0)) {
    process.stderr.write(`--finetune-seconds must be a number of seconds, 0 or more\n${USAGE}\n`);
    process.exit(2);
  }
  const rawClockOffset = values["clock-offset"];
  const clockOffsetMs = rawClockOffset === undefined ? undefined : rawClockOffset.trim() === "" ? Number.NaN : Number(rawClockOffset);
  if (clockOffsetMs !== undefined && !Number.isInteger(clockOffsetMs)) {
    process.stderr.write(`--clock-offset must be a whole number of milliseconds (negative: the service is behind)\n${USAGE}\n`);
    process.exit(2);
  }
  let faults: FaultSpec | undefined;
  if (values.faults !== undefined) {
    try {
      faults = parseFaultSpec(values.faults);
    } catch (error) {
      process.stderr.write(`--faults: ${(error as Error).message}\n${USAGE}\n`);
      process.exit(2);
    }
  }

  const names = values.workspace ?? [];
  const keys = values["api-key"] ?? [];
  if (names.length > 0 ? keys.length !== names.length : keys.length > 1) {
    const why =
      names.length > 0
        ? `each --workspace needs its own --api-key, in the same order (${names.length} workspace(s), ${keys.length} key(s))`
        : "--api-key is given once without --workspace (the default workspace's key); name more workspaces with --workspace";
    process.stderr.write(`${why}\n${USAGE}\n`);
    process.exit(2);
  }
  if (names.some((name) => name.trim() === "") || keys.some((key) => key.trim() === "")) {
    process.stderr.write(`--workspace and --api-key must not be empty\n${USAGE}\n`);
    process.exit(2);
  }
  const publicUrl = values["public-url"];
  if (publicUrl !== undefined) {
    try {
      normalizePublicUrl(publicUrl);
    } catch (error) {
      process.stderr.write(`--public-url: ${(error as Error).message}\n${USAGE}\n`);
      process.exit(2);
    }
  }

  // The storage is the built-in node:sqlite: say so plainly on an older Node.js instead of a stack trace.
  if (nodeTooOld()) {
    process.stderr.write(
      `gms-emulator needs Node.js ${NODE_NEEDED} or later (node:sqlite, undici); this is ${process.version}: ${NODE_ADVICE}\n`,
    );
    process.exit(1);
  }
  const { startEmulator, readFixturesFile } = await import("./index.js");
  // Read here, not by startEmulator: the start lines count what the file declares.
  let fixtures: ReturnType<typeof readFixturesFile> | undefined;
  if (values.fixtures !== undefined) {
    try {
      fixtures = readFixturesFile(values.fixtures);
    } catch (error) {
      process.stderr.write(
        `gms-emulator: invalid fixtures (docs/emulator.md, "Fixtures", lists what they need)\n${(error as Error).message}\n`,
      );
      process.exit(1);
    }
  }
  const fixtureKeys = fixtures?.workspaces.length ?? 0;
  // startEmulator makes the default workspace only when neither fixtures nor --workspace declare one: a lone
  // --api-key beside fixtures that declare workspaces selects nothing, and is said to be ignored.
  const defaultWorkspace = fixtureKeys === 0 && names.length === 0;
  if (!defaultWorkspace && names.length === 0 && keys.length === 1) {
    process.stderr.write(
      `gms-emulator: --api-key ignored: the fixtures declare ${fixtureKeys} workspace(s), each with its apiKey ` +
        "(add a workspace with --workspace NAME --api-key KEY)\n",
    );
  }
  const emulator = await startEmulator({
    host: values.host,
    port,
    db: values.db,
    fixtures,
    apiKey: names.length === 0 ? keys[0] : undefined,
    workspaces: names.map((name, index) => ({ name, apiKey: keys[index]! })),
    logRequests: values.log,
    faults,
    publicUrl,
    fineTuneSeconds,
    clockOffsetMs,
  });
  // Before the start lines: whoever reads them may signal at once.
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`gms-emulator: ${signal}, shutting down\n`);
    emulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`gms-emulator: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.stdout.write(`gms-emulator listening on ${emulator.url}\n`);
  process.stdout.write(`database: ${values.db}\n`);
  if (faults) process.stdout.write(`faults: ${formatFaultSpec(faults)}\n`);
  if (clockOffsetMs) process.stdout.write(`clock: ${clockOffsetMs} ms ${clockOffsetMs > 0 ? "ahead of" : "behind"} this machine's\n`);
  // A key given on the command line or in the fixtures is the caller's secret, and not echoed; a key the
  // emulator generated (or recalled from the database) is printed: nothing else tells it.
  if (emulator.generatedApiKey) process.stdout.write(`api key: ${emulator.generatedApiKey}\n`);
  // Only the sources that gave keys, each with its count.
  const sources: [string, number][] = [
    ["fixtures", fixtureKeys],
    ["--workspace/--api-key", names.length],
    ["--api-key", defaultWorkspace && !emulator.generatedApiKey ? 1 : 0],
  ];
  const given = sources.filter(([, count]) => count > 0);
  const total = given.reduce((sum, [, count]) => sum + count, 0);
  if (total > 0) {
    process.stdout.write(
      `api keys: ${total} as given (${given.map(([source, count]) => `${source}: ${count}`).join(", ")}), not printed\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`gms-emulator: ${(error as Error).message}\n`);
  process.exit(1);
});
