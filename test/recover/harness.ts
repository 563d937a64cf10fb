/**
 * What the recover suites share: running `pulumi-gms recover` in-process as the dispatcher would (a CommandIo that
 * keeps what it printed), killing a `pulumi up` with SIGKILL once its checkpoint shows a chosen moment, reading the
 * checkpoint, and counting what the service holds through its API.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { recoverCommand } from "../../src/cli/recover";
import type { PulumiCli } from "../../src/testing";
import { type CommandRun, runInProcess } from "../cli/in-process";

/** `pulumi-gms recover <argv>` in `cwd` with `env`, in-process. */
export const runRecover = (
  argv: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; onErr?: (text: string) => void },
): Promise<CommandRun> => runInProcess(recoverCommand, argv, options);

interface Resource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  delete?: boolean;
}
export interface Deployment {
  resources?: Resource[];
  pending_operations?: { type: string; resource: Resource }[];
}

/** The latest deployment of a file backend's checkpoint, or an empty one while it is not written (or being written). */
export function latestDeployment(checkpointFile: string): Deployment {
  try {
    return (JSON.parse(readFileSync(checkpointFile, "utf8")) as { checkpoint: { latest?: Deployment } }).checkpoint.latest ?? {};
  } catch {
    return {};
  }
}

const isGms = (resource: Resource) => /^(gms:index:|pulumi-nodejs:dynamic\/gms:)/.test(resource.type);

/** The gms resources a deployment records (native or dynamic, with an id). */
export const gmsResources = (deployment: Deployment): Resource[] =>
  (deployment.resources ?? []).filter((resource) => isGms(resource) && resource.id);

/** The pending creates of gms resources in a deployment. */
export const gmsPendingCreates = (deployment: Deployment) =>
  (deployment.pending_operations ?? []).filter((operation) => operation.type === "creating" && isGms(operation.resource));

/** The processes below `root`, children first, from `ps`. */
export function descendants(root: number): { pid: number; args: string }[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line)!)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3]! }));
  const found: { pid: number; args: string }[] = [];
  for (let queue = [root]; queue.length > 0; ) {
    const parent = queue.shift()!;
    const children = rows.filter((row) => row.ppid === parent);
    found.push(...children);
    queue = [...queue, ...children.map((child) => child.pid)];
  }
  return found;
}

/**
 * Waits, while `running` has not settled, until `ready(checkpoint)` holds (and then `afterMs` more), then SIGKILLs
 * every `pulumi` of this process's tree and everything below it (language host, provider plugins): a `pulumi up`
 * killed mid-apply. Resolves with what was killed (empty when the run ended first) once `running` has settled.
 */
export async function killWhen(
  cli: PulumiCli,
  checkpointFile: string,
  running: Promise<unknown>,
  ready: (deployment: Deployment) => boolean,
  afterMs = 0,
): Promise<{ pid: number; args: string }[]> {
  let settled = false;
  const done = running.then(
    () => (settled = true),
    () => (settled = true),
  );
  let killed: { pid: number; args: string }[] = [];
  while (killed.length === 0 && !settled) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (!ready(latestDeployment(checkpointFile))) continue;
    if (afterMs > 0) await new Promise((resolve) => setTimeout(resolve, afterMs));
    const clis = descendants(process.pid).filter((found) => found.args.startsWith(cli.bin));
    killed = clis.flatMap((found) => [found, ...descendants(found.pid)]);
    for (const { pid } of killed) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already (a plugin that exited with its parent).
      }
    }
  }
  await done;
  return killed;
}

/** A service whose answers to creates a test holds back, in front of the emulator (`answerGate`). */
export interface AnswerGate {
  /** The service's base URL through the gate (ends in /v1, as the emulator's). */
  url: string;
  /** How many answers the gate holds now. */
  held(): number;
  /** Lets every answer through from now on, those held included (a killed client's are dropped). */
  open(): void;
  close(): Promise<void>;
}

/** Which answers a gate may hold: the requests `holds` names (default: every create, a POST) but those `passes` lets through. */
export interface GateOptions {
  /** The requests whose answers the gate counts and holds (e.g. an import's reads, or a destroy's deletes). */
  holds?: (method: string, path: string) => boolean;
  /** A create whose answer always passes, e.g. one whose pending create would need a person to settle. */
  passes?: (path: string) => boolean;
}

/**
 * A loopback proxy in front of the emulator at `target` that passes every request on at once, so that the service
 * makes what it is asked to, and passes the answers to the first `passed` creates (POSTs answered 2xx; or the requests
 * `options.holds` names) back; the answers to later ones are held until `open()`. A run then has exactly `passed`
 * creates recorded and the others in flight, with their objects made, for as long as the test wants: the moment a kill
 * lands is the test's, not a window a busy machine may pass by.
 */
export async function answerGate(target: string, passed: number, options: GateOptions = {}): Promise<AnswerGate> {
  const upstream = new URL(target);
  let answered = 0;
  let held = 0;
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const server = createServer(async (request, response) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name)),
      ) as Record<string, string>;
      const answer = await fetch(new URL(request.url ?? "/", upstream.origin), {
        method: request.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      });
      const body = Buffer.from(await answer.arrayBuffer());
      const holds = options.holds ?? ((method: string) => method === "POST");
      const holdable = holds(request.method ?? "", request.url ?? "/") && answer.ok && !options.passes?.(request.url ?? "/");
      if (holdable && ++answered > passed) {
        held++;
        await opened;
        held--;
      }
      // The service's own headers, its Date among them: recover reads the service's clock from it.
      const passedOn = [...answer.headers].filter(
        ([name]) => !["connection", "keep-alive", "transfer-encoding", "content-length"].includes(name),
      );
      response.writeHead(answer.status, Object.fromEntries(passedOn)).end(body);
    } catch (error) {
      // A client killed mid-request: nobody reads the answer.
      if (!response.headersSent) response.writeHead(502).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}`;
  return {
    url,
    held: () => held,
    open: () => open(),
    close: () =>
      new Promise<void>((resolve) => {
        open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The moments the crash suites kill `pulumi up` at, for a program of `declared` gms resources: a name, how many
 * resources are recorded by then (with creates in flight, their answers held by an `answerGate` that lets exactly
 * that many through), and how long after that the kill lands.
 */
export const moments = (declared: number): [string, number, number][] => [
  ["the first creates were sent", 0, 120],
  ["midway", 6, 0],
  ["near the end", declared - 2, 0],
];

/** A moment of `pulumi up` to kill it at: at least `recorded` gms resources recorded, with creates in flight. */
export const moment =
  (recorded: number) =>
  (deployment: Deployment): boolean =>
    gmsResources(deployment).length >= recorded && gmsPendingCreates(deployment).length > 0;

/** A GET of the service's API, as a test reads what exists. */
export async function api<T>(emulator: { url: string; apiKey: string }, path: string): Promise<T> {
  const response = await fetch(`${emulator.url}${path}`, { headers: { authorization: `Bearer ${emulator.apiKey}` } });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Every App (its name and GUID) and every Workflow (its App's name, its own name and GUID) the service holds. */
export async function liveAppsAndWorkflows(emulator: { url: string; apiKey: string }) {
  const apps = (await api<{ data: { guid: string; name: string }[] }>(emulator, "/apps?limit=100")).data;
  const workflows = (
    await Promise.all(
      apps.map(async (app) =>
        (
          await api<{ guid: string; name: string }[]>(emulator, `/apps/${app.guid}/workflows?limit=100`)
        ).map((workflow) => ({
          ...workflow,
          app: app.name,
        })),
      ),
    )
  ).flat();
  return { apps, workflows };
}

/** The objects of stack `stack` the service holds, by kind: those named `<stack>-...`, as the crash suites' programs name them. */
export async function stackObjects(service: { url: string; apiKey: string }, stack: string) {
  const { apps, workflows } = await liveAppsAndWorkflows(service);
  const connections = await api<{ guid: string; name: string | null }[]>(service, "/providers");
  const mine = <T extends { name: string | null }>(objects: T[]) => objects.filter((object) => object.name?.startsWith(`${stack}-`));
  return { apps: mine(apps), workflows: mine(workflows), connections: mine(connections) };
}

/**
 * After the `up` that follows recover, for the crash suites' programs (`count` Apps `<stack>-app-<i>`, a Workflow
 * `<stack>-flow-<i>` in each, two connections `<stack>-conn-<i>`): each declared object exists once, the objects are
 * exactly those the stack holds (so none is orphaned), the ones recover recorded among them, and no operation is pending.
 */
export async function expectConverged(
  service: { url: string; apiKey: string },
  stack: string,
  count: number,
  checkpointFile: string,
  recordedIds: (string | undefined)[],
): Promise<void> {
  const objects = await stackObjects(service, stack);
  const names = (list: { name: string | null }[]) => list.map((object) => object.name).sort();
  const expected = (kind: string, many: number) => Array.from({ length: many }, (_, i) => `${stack}-${kind}-${i}`).sort();
  expect(names(objects.apps)).toEqual(expected("app", count));
  expect(names(objects.workflows)).toEqual(expected("flow", count));
  expect(names(objects.connections)).toEqual(expected("conn", 2));
  const state = latestDeployment(checkpointFile);
  expect(state.pending_operations ?? []).toEqual([]);
  const held = new Set(gmsResources(state).map((resource) => resource.id));
  expect(held).toEqual(new Set([...objects.apps, ...objects.workflows, ...objects.connections].map((object) => object.guid)));
  for (const id of recordedIds) expect(held.has(id)).toBe(true);
}
