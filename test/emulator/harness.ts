/**
 * Drives the emulator's routes in-process (Fastify inject: real routing, hooks and serialization,
 * no socket). Two workspaces so that scoping can be tested.
 */
import { buildServer, loadFixtures, Store, type Fixtures } from "../../src/emulator";

export const ACME_KEY = "gms_test_acme_key";
export const OTHER_KEY = "gms_test_other_key";

export const TEST_FIXTURES: Fixtures = {
  workspaces: [
    {
      name: "Acme",
      slug: "acme",
      apiKey: ACME_KEY,
      limits: { apps: 5 },
      apps: [
        {
          name: "Support",
          actions: [
            { name: "Summarize", prompt: "Summarize: {{text}}", model: "gpt-4o-mini" },
            { name: "Classify", prompt: "Classify: {{text}}", model: "gpt-4o" },
          ],
        },
        { name: "Sales", actions: [{ name: "Pitch", prompt: "Pitch {{product}}", model: "gpt-4o" }] },
      ],
      contexts: [{ name: "Handbook" }, { name: "FAQ" }],
      skills: [{ name: "web-search", type: "web", metadata: [{ name: "engine", required: true, value: "bing", type: "string" }] }],
    },
    {
      name: "Other",
      slug: "other",
      apiKey: OTHER_KEY,
      apps: [{ name: "Elsewhere", actions: [{ name: "Echo", prompt: "{{text}}" }] }],
      contexts: [{ name: "Private" }],
    },
  ],
  evalTypes: [{ name: "Exact match" }, { name: "Toxicity" }],
};

type AppFixture = NonNullable<NonNullable<Fixtures["workspaces"]>[number]["apps"]>[number];

/** The shared fixtures with some Apps changed: each named App is replaced by what its function makes of it. */
export function withApps(change: Record<string, (app: AppFixture) => AppFixture>, fixtures: Fixtures = TEST_FIXTURES): Fixtures {
  return {
    ...fixtures,
    workspaces: fixtures.workspaces!.map((workspace) => ({
      ...workspace,
      apps: workspace.apps!.map((app) => change[app.name]?.(app) ?? app),
    })),
  };
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
}

export type Call = <T = any>(
  method: string,
  url: string,
  body?: unknown,
  options?: { apiKey?: string | null; headers?: Record<string, string> },
) => Promise<Reply<T>>;

export function createTestEmulator(fixtures: Fixtures = TEST_FIXTURES, path = ":memory:") {
  const store = new Store(path);
  loadFixtures(store, fixtures);
  const server = buildServer(store);
  const call: Call = async (method, url, body, options = {}) => {
    const apiKey = options.apiKey === undefined ? ACME_KEY : options.apiKey;
    const headers: Record<string, string> = { ...options.headers };
    if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
    const response = await server.inject({
      method: method as "GET",
      url,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    const text = response.body;
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (served files): keep the text
    }
    return { status: response.statusCode, body: parsed as any, headers: response.headers };
  };
  /** The App GUID of a fixture App by name, through the public list route. */
  const appGuid = async (name: string, apiKey = ACME_KEY): Promise<string> => {
    const list = await call("GET", "/v1/apps", undefined, { apiKey });
    const app = list.body.data.find((candidate: { name: string }) => candidate.name === name);
    if (!app) throw new Error(`no fixture App named ${name}`);
    return app.guid;
  };
  /** The Action GUID of a fixture Action by App and Action name, through the public routes. */
  const actionGuid = async (appName: string, actionName: string, apiKey = ACME_KEY): Promise<string> => {
    const actions = await call("GET", `/v1/apps/${await appGuid(appName, apiKey)}/actions`, undefined, { apiKey });
    const action = actions.body.find((candidate: { name: string }) => candidate.name === actionName);
    if (!action) throw new Error(`no fixture Action named ${actionName}`);
    return action.guid;
  };
  return {
    store,
    server,
    call,
    appGuid,
    actionGuid,
    async close() {
      await server.close();
      store.close();
    },
  };
}

export const MISSING_GUID = "00000000-0000-4000-8000-000000000000";

/**
 * Calls a running emulator over real HTTP with its API key, as an out-of-band change or an independent
 * check through the API would. The body is the parsed JSON, or undefined when there is none.
 */
export async function callOverHttp<T = any>(
  emulator: { url: string; apiKey: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}
