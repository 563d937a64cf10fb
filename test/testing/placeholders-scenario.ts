/**
 * The placeholder scenario both engines are held to (test/testing/placeholders.test.ts on LocalEngine,
 * test/pulumi-cli/placeholders.test.ts on the real CLI): a storm proxy in front of the emulator makes three
 * creates end as placeholders, deterministically, while objects they could take for their own land in their
 * windows; the next `up` or `refresh` must settle each placeholder on its own object only.
 *
 * The first `up` (every step starts before the proxy answers any of the storm's requests, so the CLI, which
 * starts no step after a failed one, runs them all):
 * - `lost`, a ProviderConnection (openai, no name): its POST answers 503 without reaching the service, and
 *   every lookup 503 too; meanwhile `sibling`, an identical connection of the stack (its own base URL, so its
 *   own client), is created, and so is `outsider`, an anthropic connection made outside the stack: both in
 *   `lost`'s window, both objects it must never take;
 * - `upload`, a ContextSource from a StringAsset: its POST is served and its answer lost, every lookup 503s;
 * - `model`, a Model: the same as `upload`.
 * The up fails with `lost`, `upload` and `model` recorded as placeholders and `sibling` as created.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import type { Fixtures, RunningEmulator } from "../../src/emulator";
import { EngineError } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";

export const PLACEHOLDER_FIXTURES: Fixtures = {
  workspaces: [{ name: "Placeholders", slug: "placeholders", apiKey: "gms_placeholders_key", contexts: [{ name: "Handbook" }] }],
};

/** The program: `ordered` makes `sibling` wait for `lost`, so that `lost` is settled before the host meets `sibling`. */
export function placeholderProgram(options: { context: string; siblingBaseUrl: string; ordered: boolean }): string {
  return `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const lost = new gms.ProviderConnection("lost", { provider: "openai", key: "sk-placeholder-lost" });
new gms.ProviderConnection(
  "sibling",
  { provider: "openai", key: "sk-placeholder-sibling", connection: { baseUrl: ${JSON.stringify(options.siblingBaseUrl)} } },
  ${options.ordered ? "{ dependsOn: [lost] }" : "{}"},
);
new gms.ContextSource("upload", { context: ${JSON.stringify(options.context)}, file: new pulumi.asset.StringAsset("Returns are accepted within 30 days.") });
new gms.Model("model", { llm: "placeholder-llm", provider: "openai", key: "sk-placeholder-model" });
`;
}

/** What the proxy does with one request: pass it on, answer it itself, or pass it on and cut its answer's body. */
export type ProxyAction =
  | { kind: "forward"; transform?: (body: unknown) => unknown; onAnswered?: () => void }
  | { kind: "answer"; status: number }
  | { kind: "lose" };

export interface ProxiedRequest {
  /** The path segment before `/v1` (`""` for none): a second base URL, so a second client in the provider. */
  prefix: string;
  method: string;
  /** The path from `/v1`, without the query string. */
  path: string;
}

/**
 * A loopback HTTP proxy in front of the emulator: `baseUrl(prefix)` is a base URL whose requests reach the
 * emulator with the prefix stripped, each as `rule` decides (it may wait before deciding).
 */
export async function startStormProxy(target: RunningEmulator) {
  let rule: (request: ProxiedRequest) => ProxyAction | Promise<ProxyAction> = () => ({ kind: "forward" });
  const upstream = new URL(target.url);
  const server: Server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", async () => {
      const url = incoming.url ?? "/";
      const match = url.match(/^(?:\/([^/]+))?(\/v1(?:[/?].*)?)$/);
      if (!match) {
        outgoing.writeHead(404).end();
        return;
      }
      const [, prefix = "", rest = ""] = match;
      const action = await rule({ prefix, method: incoming.method ?? "GET", path: rest.split("?")[0]! });
      if (action.kind === "answer") {
        outgoing.writeHead(action.status, { "content-type": "application/json", "retry-after": "0" });
        outgoing.end(JSON.stringify({ detail: "storm" }));
        return;
      }
      const body = Buffer.concat(chunks);
      const headers = { ...incoming.headers, host: upstream.host };
      const forwarded = request(
        { host: upstream.hostname, port: upstream.port, method: incoming.method, path: rest, headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => parts.push(chunk));
          answer.on("end", () => {
            // Served: the service did the work. Lost: the status line arrives (so the client knows the service is
            // done with the request), the body never does.
            if (action.kind === "forward") action.onAnswered?.();
            if (action.kind === "lose") {
              outgoing.writeHead(answer.statusCode ?? 200, { "content-type": "application/json", "content-length": "1024" });
              outgoing.write("{", () => outgoing.socket?.destroy());
              return;
            }
            let text = Buffer.concat(parts);
            if (action.transform) text = Buffer.from(JSON.stringify(action.transform(JSON.parse(text.toString("utf8")))));
            const { "content-length": _length, "transfer-encoding": _encoding, ...answerHeaders } = answer.headers;
            outgoing.writeHead(answer.statusCode ?? 502, { ...answerHeaders, "content-length": String(text.length) });
            outgoing.end(text);
          });
        },
      );
      forwarded.on("error", () => outgoing.socket?.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: (prefix = "") => `http://127.0.0.1:${port}${prefix ? `/${prefix}` : ""}/v1`,
    setRule(next: typeof rule) {
      rule = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type StormProxy = Awaited<ReturnType<typeof startStormProxy>>;

/** A promise with its resolver. */
function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * The storm of the first `up` (see the module comment). Every storm answer waits until all four creates are
 * under way and `sibling` and `outsider` exist, so each lands in the placeholders' windows and every step has
 * started before one fails. Resolves with the outsider's GUID once it is made.
 */
export function stormRule(emulator: RunningEmulator, proxy: StormProxy): Promise<string> {
  const lostPosted = signal();
  const siblingCreated = signal();
  const sourcePosted = signal();
  const modelPosted = signal();
  let outsider: Promise<string> | undefined;
  const makeOutsider = () =>
    (outsider ??= callOverHttp<{ guid: string }>(emulator, "POST", "/providers", { provider: "anthropic", key: "sk-outsider" }).then(
      (answer) => answer.body.guid,
    ));
  const everythingUnderWay = Promise.all([lostPosted.promise, siblingCreated.promise, sourcePosted.promise, modelPosted.promise]).then(
    makeOutsider,
  );
  proxy.setRule(async ({ prefix, method, path }) => {
    if (prefix === "sibling") {
      if (method === "POST" && path === "/v1/providers") {
        await lostPosted.promise;
        return { kind: "forward", onAnswered: siblingCreated.resolve };
      }
      return { kind: "forward" };
    }
    if (method === "POST" && path === "/v1/providers") {
      lostPosted.resolve();
      await everythingUnderWay;
      return { kind: "answer", status: 503 };
    }
    if (method === "POST" && /^\/v1\/contexts\/[^/]+\/context_sources$/.test(path)) {
      sourcePosted.resolve();
      await everythingUnderWay;
      return { kind: "lose" };
    }
    if (method === "POST" && path === "/v1/models") {
      modelPosted.resolve();
      await everythingUnderWay;
      return { kind: "lose" };
    }
    // The lookups after the lost answers.
    if (method === "GET" && (path === "/v1/providers" || path === "/v1/models" || /\/context_sources$/.test(path))) {
      await everythingUnderWay;
      return { kind: "answer", status: 503 };
    }
    return { kind: "forward" };
  });
  return everythingUnderWay;
}

/** A service that reports no creation time for Models (the spec does not name their timestamp fields). */
export function modelsWithoutCreationTime(proxy: StormProxy): void {
  const strip = (body: unknown): unknown =>
    Array.isArray(body) ? body.map(strip) : body && typeof body === "object" ? { ...body, created_at: undefined } : body;
  proxy.setRule(({ method, path }) =>
    method === "GET" && path === "/v1/models" ? { kind: "forward", transform: strip } : { kind: "forward" },
  );
}

/** What the service holds: connections, the Context's sources and Models, by GUID. */
export async function liveObjects(emulator: RunningEmulator, context: string) {
  const guids = async (path: string) => {
    const { body } = await callOverHttp<unknown>(emulator, "GET", path);
    const list = (Array.isArray(body) ? body : (body as { data: unknown[] }).data) as { guid: string }[];
    return list.map((item) => item.guid).sort();
  };
  return {
    connections: await guids("/providers"),
    sources: await guids(`/contexts/${context}/context_sources`),
    models: await guids("/models"),
  };
}

/** The Handbook Context's GUID. */
export async function handbookOf(emulator: RunningEmulator): Promise<string> {
  const workspace = (await callOverHttp<{ guid: string }>(emulator, "GET", "/workspaces/current")).body.guid;
  const contexts = (await callOverHttp<{ guid: string; name: string }[]>(emulator, "GET", `/workspaces/${workspace}/context`)).body;
  return contexts.find((context) => context.name === "Handbook")!.guid;
}

type Props = Record<string, unknown>;

/** One stack of the scenario on either engine: runs an operation of a program, reads the state back. */
export interface PlaceholderStack {
  emulator: RunningEmulator;
  proxy: StormProxy;
  context: string;
  run(operation: "up" | "refresh" | "destroy", program: string, options?: { parallel?: number }): Promise<unknown>;
  /** The state's resources of the program by name. */
  resources(): Promise<Record<string, { id: string; outputs: Props }>>;
  /** Every line the engine printed. */
  lines: string[];
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What the storm left: the objects in the service, by role. */
export interface Stormed {
  sibling: string;
  outsider: string;
  /** The objects `upload`'s and `model`'s lost creates made. */
  lostSource: string;
  lostModel: string;
}

export const programOf = (stack: PlaceholderStack, ordered: boolean) =>
  placeholderProgram({ context: stack.context, siblingBaseUrl: stack.proxy.baseUrl("sibling"), ordered });

/** The first `up`, through the storm: three placeholders and the sibling in the state, the outsider beside it. */
export async function stormyUp(stack: PlaceholderStack): Promise<Stormed> {
  const outsider = stormRule(stack.emulator, stack.proxy);
  const failure = await stack.run("up", programOf(stack, false)).then(
    () => undefined,
    (error: unknown) => error,
  );
  stack.proxy.setRule(() => ({ kind: "forward" }));
  expect(failure).toBeInstanceOf(EngineError);
  const state = await stack.resources();
  for (const name of ["lost", "upload", "model"]) expect(state[name]?.id, name).toMatch(/^unresolved-/);
  expect(state.sibling?.id).toMatch(GUID);
  expect(state.upload!.outputs.__unresolvedCreate).toMatchObject({ identity: { uploadedUrlSha256: expect.any(String) } });
  const live = await liveObjects(stack.emulator, stack.context);
  // `lost`'s POST never reached the service; the other two did.
  expect(live.connections).toEqual([state.sibling!.id, await outsider].sort());
  expect(live.sources).toHaveLength(1);
  expect(live.models).toHaveLength(1);
  return { sibling: state.sibling!.id, outsider: await outsider, lostSource: live.sources[0]!, lostModel: live.models[0]! };
}

/**
 * The next `up`, with `sibling` waiting for `lost` (so the host meets `sibling` only after `lost` is settled)
 * and a service that shows no creation time for Models: `lost` is replaced without taking the sibling's or the
 * outsider's connection, `upload` deletes the source its lost create made, and `model`, which nothing tells
 * apart, names its possible orphan and leaves it. `destroy` then leaves only those two.
 */
export async function upSettles(stack: PlaceholderStack, stormed: Stormed): Promise<void> {
  modelsWithoutCreationTime(stack.proxy);
  const from = stack.lines.length;
  await stack.run("up", programOf(stack, true));
  stack.proxy.setRule(() => ({ kind: "forward" }));
  const state = await stack.resources();
  const replacement = state.lost!.id;
  expect(replacement).toMatch(GUID);
  expect(state.sibling!.id).toBe(stormed.sibling);
  expect(state.upload!.id).not.toBe(stormed.lostSource);
  expect(state.model!.id).not.toBe(stormed.lostModel);
  const live = await liveObjects(stack.emulator, stack.context);
  expect(live.connections).toEqual([stormed.sibling, stormed.outsider, replacement].sort());
  expect(live.sources).toEqual([state.upload!.id]);
  expect(live.models).toEqual([stormed.lostModel, state.model!.id].sort());
  const warning = stack.lines.slice(from).find((line) => line.includes(stormed.lostModel));
  expect(warning).toMatch(/warning: Model unresolved-[0-9a-f-]+: the create whose answer was lost may have made this object/);
  expect(warning).toContain(`${stormed.lostModel} (the service reports no creation time for a Model`);

  await stack.run("destroy", programOf(stack, true));
  expect(await stack.resources()).toEqual({});
  expect(await liveObjects(stack.emulator, stack.context)).toEqual({
    connections: [stormed.outsider],
    sources: [],
    models: [stormed.lostModel],
  });
}

/**
 * `refresh` instead: `lost` is dropped (nothing in its window is its own), `upload` and `model` adopt the
 * objects their lost creates made, and no two resources hold one object. `destroy` then leaves only the outsider.
 */
export async function refreshSettles(stack: PlaceholderStack, stormed: Stormed, options: { parallel?: number } = {}): Promise<void> {
  await stack.run("refresh", programOf(stack, false), options);
  const state = await stack.resources();
  expect(Object.fromEntries(Object.entries(state).map(([name, resource]) => [name, resource.id]))).toEqual({
    sibling: stormed.sibling,
    upload: stormed.lostSource,
    model: stormed.lostModel,
  });
  expect(await liveObjects(stack.emulator, stack.context)).toEqual({
    connections: [stormed.sibling, stormed.outsider].sort(),
    sources: [stormed.lostSource],
    models: [stormed.lostModel],
  });

  await stack.run("destroy", programOf(stack, false));
  expect(await stack.resources()).toEqual({});
  expect(await liveObjects(stack.emulator, stack.context)).toEqual({ connections: [stormed.outsider], sources: [], models: [] });
}
