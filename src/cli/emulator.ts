/**
 * `pulumi-gms emulator`: the emulator of the service on a port until SIGINT or SIGTERM (the `gms-emulator` of
 * 0.1.0). API keys come from the environment or a file, never from a flag: a flag shows in the process list and
 * the shell's history.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { RunningEmulator } from "../emulator";
import { type Command, type CommandIo, EXIT, UsageError } from "./command";

/** The default workspace's key, when neither the fixtures nor `--workspace` declare workspaces. */
export const API_KEY_VARIABLE = "GMS_EMULATOR_API_KEY";

const SYNOPSIS = `usage: pulumi-gms emulator [--host 127.0.0.1] [--port 4000] [--db FILE | --db :memory:] [--fixtures FILE]
                           [--workspace NAME ...] [--api-key-file FILE] [--log] [--faults SPEC] [--public-url URL]
                           [--finetune-seconds N] [--clock-offset MS] [--json]`;

const ABOUT = `Serves the service's API under /v1 on the port, keeping every record in the SQLite file --db (default
gms-emulator.db), until SIGINT or SIGTERM. It prints "gms-emulator listening on <url>" and a key it generated;
keys it was given are counted, never printed.`;

const KEYS_HELP = `API keys, never on the command line:
${API_KEY_VARIABLE}  the default workspace's key (without it the emulator generates one and prints it,
                      and reuses it on the next start with the same --db)
--api-key-file FILE   a file of API keys, one a line (blank lines and lines starting with # are skipped):
                      without --workspace its one key is the default workspace's (in place of
                      ${API_KEY_VARIABLE}); with --workspace, one key per --workspace, in their order
--workspace NAME      a workspace to have, its key the next line of --api-key-file; repeat it for more
                      (e.g. --workspace Acme --workspace Beta --api-key-file keys.txt, keys.txt holding Acme's key,
                      then Beta's). A workspace an earlier run made in the same --db keeps its records and gains the key.
A key given beside fixtures that declare workspaces selects nothing, and is said to be ignored.`;

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
                  rate=<n>/s|<n>/min         a rate limit per API key: each key's budget refills at this rate and
                                             holds burst=<n> requests (default one second's worth); past it,
                                             429 with Retry-After the seconds until the budget has one again
                e.g. --faults seed=7,error=0.05,throttle=0.05,retry-after=0,lost=0.02
                     --faults rate=5/s,burst=10`;

const OUTPUT_HELP = `--log   one line per request (method, path, status, time), never headers or bodies
--json  once listening, one JSON line on standard output: {"url", "port", "database", "workspaces": [{"name",
        "slug", "guid"}], "faults", "clockOffsetMs"}, with "generatedApiKey" only when the emulator generated
        the key; every other line (start lines, --log, shutdown) then goes to standard error`;

const NO_KEY_FLAG =
  `--api-key is no longer accepted: a key on the command line shows in the process list and the shell's history. ` +
  `Give the default workspace's key in ${API_KEY_VARIABLE} or in a file (--api-key-file FILE); with --workspace, ` +
  "--api-key-file FILE holds each workspace's key, one a line, in the --workspace order";

const OPTIONS = {
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "4000" },
  db: { type: "string", default: "gms-emulator.db" },
  fixtures: { type: "string" },
  workspace: { type: "string", multiple: true },
  "api-key-file": { type: "string" },
  log: { type: "boolean", default: false },
  faults: { type: "string" },
  "public-url": { type: "string" },
  "finetune-seconds": { type: "string" },
  "clock-offset": { type: "string" },
  json: { type: "boolean", default: false },
} as const;

export const emulatorCommand: Command = {
  name: "emulator",
  summary: "run the emulator of the service (real HTTP, SQLite) until SIGINT or SIGTERM",
  usage: [SYNOPSIS, ABOUT, KEYS_HELP, FAULTS_HELP, PUBLIC_URL_HELP, FINE_TUNE_HELP, CLOCK_HELP, OUTPUT_HELP].join("\n\n"),
  run: runEmulator,
};

/** A key source and what it gave; `source` names it in the start lines and messages, never the key. */
interface GivenKey {
  key: string;
  source: string;
}

async function runEmulator(argv: string[], io: CommandIo): Promise<number> {
  // Before parsing, which would call it merely unknown: the user is told where the key goes now.
  if (argv.some((arg) => arg === "--api-key" || arg.startsWith("--api-key="))) throw new UsageError(NO_KEY_FLAG);
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port must be a whole number from 0 to 65535");
  const rawFineTuneSeconds = values["finetune-seconds"];
  // Number("") is 0: an empty value is refused rather than read as 0.
  const fineTuneSeconds = rawFineTuneSeconds?.trim()
    ? Number(rawFineTuneSeconds)
    : rawFineTuneSeconds === undefined
      ? undefined
      : Number.NaN;
  if (fineTuneSeconds !== undefined && !(Number.isFinite(fineTuneSeconds) && fineTuneSeconds >= 0)) {
    throw new UsageError("--finetune-seconds must be a number of seconds, 0 or more");
  }
  const rawClockOffset = values["clock-offset"];
  const clockOffsetMs = rawClockOffset === undefined ? undefined : rawClockOffset.trim() === "" ? Number.NaN : Number(rawClockOffset);
  if (clockOffsetMs !== undefined && !Number.isInteger(clockOffsetMs)) {
    throw new UsageError("--clock-offset must be a whole number of milliseconds (negative: the service is behind)");
  }
  // Both modules are small and load nothing heavy; they are loaded here so that `pulumi-gms --help` does not parse them.
  const { formatFaultSpec, parseFaultSpec } = await import("../emulator/faults/spec.js");
  const { normalizePublicUrl } = await import("../emulator/routes/origin.js");
  let faults: ReturnType<typeof parseFaultSpec> | undefined;
  if (values.faults !== undefined) {
    try {
      faults = parseFaultSpec(values.faults);
    } catch (error) {
      throw new UsageError(`--faults: ${(error as Error).message}`);
    }
  }
  const publicUrl = values["public-url"];
  if (publicUrl !== undefined) {
    try {
      normalizePublicUrl(publicUrl);
    } catch (error) {
      throw new UsageError(`--public-url: ${(error as Error).message}`);
    }
  }
  const names = values.workspace ?? [];
  if (names.some((name) => name.trim() === "")) throw new UsageError("--workspace must not be empty");
  const keyFile = values["api-key-file"];
  if (names.length > 0 && keyFile === undefined) {
    throw new UsageError(`each --workspace needs its key: --api-key-file FILE, one key a line in the --workspace order`);
  }

  /** A path the command opens: relative to io.cwd, and as typed when that is the process's folder, for the messages that quote it. */
  const opened = (path: string) => (resolve(io.cwd, path) === resolve(path) ? path : resolve(io.cwd, path));
  let fileKeys: string[] | undefined;
  if (keyFile !== undefined) {
    try {
      fileKeys = readKeyFile(opened(keyFile));
    } catch (error) {
      io.err(`pulumi-gms emulator: --api-key-file: ${(error as Error).message}\n`);
      return EXIT.failed;
    }
    const wanted = Math.max(names.length, 1);
    if (fileKeys.length !== wanted) {
      throw new UsageError(
        names.length > 0
          ? `--api-key-file holds ${fileKeys.length} key(s) for ${names.length} --workspace(s): one key a line, in the --workspace order`
          : `--api-key-file holds ${fileKeys.length} keys; without --workspace it holds one, the default workspace's (name more workspaces with --workspace)`,
      );
    }
  }
  const { defaultKey, ignored } = defaultWorkspaceKey(names, fileKeys, io.env);

  const { startEmulator, readFixturesFile } = await import("../emulator/index.js");
  // Read here, not by startEmulator: the start lines count what the file declares.
  let fixtures: ReturnType<typeof readFixturesFile> | undefined;
  if (values.fixtures !== undefined) {
    try {
      fixtures = readFixturesFile(opened(values.fixtures));
    } catch (error) {
      io.err(`pulumi-gms emulator: invalid fixtures (docs/emulator.md, "Fixtures", lists what they need)\n${(error as Error).message}\n`);
      return EXIT.failed;
    }
  }
  const fixtureKeys = fixtures?.workspaces.length ?? 0;
  // startEmulator makes the default workspace only when neither fixtures nor --workspace declare one: a default
  // key beside fixtures that declare workspaces selects nothing, and is said to be ignored.
  const defaultWorkspace = fixtureKeys === 0 && names.length === 0;
  if (defaultKey && !defaultWorkspace) {
    ignored.push(
      `${defaultKey.source} ignored: the fixtures declare ${fixtureKeys} workspace(s), each with its apiKey ` +
        "(add a workspace with --workspace NAME and its key in --api-key-file)",
    );
  }
  for (const line of ignored) io.err(`pulumi-gms emulator: ${line}\n`);

  // Under --json, standard output holds the one JSON line; every line for a person goes to standard error.
  const say = values.json ? io.err : io.out;
  let running: RunningEmulator;
  try {
    running = await startEmulator({
      host: values.host,
      port,
      db: values.db === ":memory:" ? values.db : opened(values.db),
      fixtures,
      apiKey: defaultWorkspace ? defaultKey?.key : undefined,
      workspaces: names.map((name, index) => ({ name, apiKey: fileKeys![index]! })),
      // Through the command's output rather than the server's own logRequests (always standard output): under
      // --json these lines go to standard error.
      onRequestComplete: values.log
        ? (entry) => say(`${entry.method} ${entry.path} ${entry.status} ${entry.durationMs.toFixed(1)}ms\n`)
        : undefined,
      faults,
      publicUrl,
      fineTuneSeconds,
      clockOffsetMs,
    });
  } catch (error) {
    io.err(`pulumi-gms emulator: ${(error as Error).message}\n`);
    return EXIT.failed;
  }

  // Before the start lines: whoever reads them may signal at once.
  const stopped = new Promise<number>((settle) => {
    let closing = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (closing) return;
      closing = true;
      say(`gms-emulator: ${signal}, shutting down\n`);
      const done = (code: number) => {
        process.off("SIGINT", shutdown);
        process.off("SIGTERM", shutdown);
        settle(code);
      };
      running.close().then(
        () => done(EXIT.done),
        (error: unknown) => {
          io.err(`pulumi-gms emulator: ${(error as Error).message}\n`);
          done(EXIT.failed);
        },
      );
    };
    process.on("SIGINT", shutdown);
    process.on("SIGTERM", shutdown);
  });

  say(`gms-emulator listening on ${running.url}\n`);
  say(`database: ${values.db}\n`);
  if (faults) say(`faults: ${formatFaultSpec(faults)}\n`);
  if (clockOffsetMs) say(`clock: ${clockOffsetMs} ms ${clockOffsetMs > 0 ? "ahead of" : "behind"} this machine's\n`);
  // A key the caller gave (environment, file, fixtures) is the caller's secret, and not echoed; a key the emulator
  // generated (or recalled from the database) is printed: nothing else tells it. Under --json it is in the JSON line
  // only, which a pipeline reads, rather than on standard error too, which logs keep.
  if (running.generatedApiKey && !values.json) say(`api key: ${running.generatedApiKey}\n`);
  // Only the sources that gave keys, each with its count.
  const sources: [string, number][] = [
    ["fixtures", fixtureKeys],
    ["--workspace/--api-key-file", names.length],
    [defaultKey?.source ?? "", defaultWorkspace && defaultKey ? 1 : 0],
  ];
  const given = sources.filter(([, count]) => count > 0);
  const total = given.reduce((sum, [, count]) => sum + count, 0);
  if (total > 0) say(`api keys: ${total} as given (${given.map(([source, count]) => `${source}: ${count}`).join(", ")}), not printed\n`);
  if (values.json) io.out(`${JSON.stringify(startRecord(running, values.db, faults && formatFaultSpec(faults), clockOffsetMs ?? 0))}\n`);

  return stopped;
}

/**
 * The default workspace's key, from --api-key-file without --workspace, else from the environment; and the
 * sources that would select nothing, each said to be ignored (and never used).
 */
function defaultWorkspaceKey(
  names: string[],
  fileKeys: string[] | undefined,
  env: NodeJS.ProcessEnv,
): { defaultKey: GivenKey | undefined; ignored: string[] } {
  const envKey = env[API_KEY_VARIABLE]?.trim() || undefined;
  if (names.length > 0) {
    const why = `${API_KEY_VARIABLE} ignored: it is the default workspace's key, and --workspace names the workspaces to have`;
    return { defaultKey: undefined, ignored: envKey ? [why] : [] };
  }
  if (fileKeys) {
    const why = `${API_KEY_VARIABLE} ignored: --api-key-file gives the default workspace's key`;
    return { defaultKey: { key: fileKeys[0]!, source: "--api-key-file" }, ignored: envKey ? [why] : [] };
  }
  return { defaultKey: envKey ? { key: envKey, source: API_KEY_VARIABLE } : undefined, ignored: [] };
}

/**
 * The keys of an --api-key-file: one a line, blank lines and `#` comments skipped, surrounding blanks (a CRLF's
 * carriage return too) dropped. A read failure's message names the file, never a line of it.
 */
function readKeyFile(path: string): string[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** What a pipeline needs once the emulator listens: where, and the workspaces by name; no key but a generated one. */
function startRecord(running: RunningEmulator, database: string, faults: string | undefined, clockOffsetMs: number) {
  const workspaces = new Map<string, { name: string; slug: string; guid: string }>();
  for (const key of running.apiKeys) {
    const caller = running.store.workspaces.authenticate(key);
    if (!caller) continue;
    const { name, slug, guid } = running.store.workspaces.current(caller);
    workspaces.set(guid, { name, slug, guid });
  }
  return {
    url: running.url,
    port: Number(new URL(running.url).port),
    database,
    workspaces: [...workspaces.values()],
    faults: faults ?? null,
    clockOffsetMs,
    ...(running.generatedApiKey ? { generatedApiKey: running.generatedApiKey } : {}),
  };
}
