/**
 * A big workspace for discover's `--split-by app`: about 2,000 objects across 20 Apps, made as a team's estate grows.
 * The fixtures hold what the API cannot create (20 Apps with two Actions and twelve Data records each, five Contexts,
 * a configured Skill, two Eval types); the API makes the rest, a few at a time:
 * - per App (75 objects with the App): 30 Workflows, 20 Datasets, 12 Evals on its Actions (two on a Dataset of no
 *   App, which the App's program reads from the shared stack, one on the next App's Dataset), 10 Experiments and a
 *   fine-tune, which makes its own training Dataset;
 * - shared (500): 5 ProviderConnections and 10 Models, each with a key, 45 copies of the configured Skill, 270
 *   Context Sources over the five Contexts, and 170 Datasets of no App.
 * `fullListing` reads back everything the service holds, every field of every object, to compare before and after.
 */
import { expect } from "vitest";
import type { Fixtures } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";

export const ESTATE_KEY = "gms_discover_estate_key_2a7f";
export const APPS = 20;
const CONTEXTS = ["Handbook", "FAQ", "Policies", "Releases", "Runbooks"];
const PROVIDER_TYPES = ["openai", "anthropic", "mistral", "azure", "cohere"];

export const ESTATE_FIXTURES: Fixtures = {
  workspaces: [
    {
      name: "Estate",
      slug: "estate",
      apiKey: ESTATE_KEY,
      apps: Array.from({ length: APPS }, (_, app) => ({
        name: `Team ${String(app + 1).padStart(2, "0")}`,
        actions: [
          { name: "Answer", prompt: "Answer: {{text}}", model: "gpt-4o" },
          { name: "Review", prompt: "Review: {{text}}", model: "gpt-4o-mini" },
        ],
        data: Array.from({ length: 12 }, (_, index) => ({ action: "Answer", input: { text: `q${index}` }, output: `a${index}` })),
      })),
      contexts: CONTEXTS.map((name) => ({ name })),
      skills: [{ name: "web-search", type: "web" }],
    },
  ],
  evalTypes: [{ name: "Exact match" }, { name: "Toxicity" }],
};

type Api = <T = any>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;

export const estateApi =
  (url: string): Api =>
  (method, path, body) =>
    callOverHttp({ url, apiKey: ESTATE_KEY }, method, path, body);

/** Runs `tasks` with at most `width` at once; resolves with their results in order. */
async function inTurns<T>(tasks: (() => Promise<T>)[], width = 16): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < tasks.length; index = next++) results[index] = await tasks[index]!();
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

export interface Estate {
  /** How many objects the API made (the fine-tunes' training Datasets included). */
  made: number;
  /** The key each connection and Model was made with, by its GUID: never to be printed. */
  keys: Map<string, string>;
}

export async function seedEstate(url: string): Promise<Estate> {
  const api = estateApi(url);
  const origin = url.replace(/\/v1$/, "");
  const keys = new Map<string, string>();
  const made = async (path: string, body: unknown): Promise<string> => {
    const answer = await api("POST", path, body);
    expect(answer.status, `POST ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body.guid as string;
  };
  const numericId = async (kind: "data" | "providers", guid: string) =>
    (await callOverHttp({ url: origin, apiKey: ESTATE_KEY }, "GET", `/_emulator/${kind}/${guid}`)).body.id as number;
  const apps = ((await api("GET", "/apps?limit=100")).body.data as { guid: string; name: string }[]).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
  expect(apps).toHaveLength(APPS);
  const workspace = (await api("GET", "/workspaces/current")).body.guid as string;
  const contexts = ((await api("GET", `/workspaces/${workspace}/context`)).body as { guid: string }[]).map((context) => context.guid);
  const evalType = ((await api("GET", "/evals/types")).body as { guid: string }[])[0]!.guid;

  // Shared: connections and Models with keys, Skill copies, Context Sources, Datasets of no App.
  const connections = await inTurns(
    Array.from({ length: 5 }, (_, index) => async () => {
      const key = `sk-estate-connection-${index}-7c1e`;
      const guid = await made("/providers", { provider: PROVIDER_TYPES[index % PROVIDER_TYPES.length], name: `Connection ${index}`, key });
      keys.set(guid, key);
      return guid;
    }),
  );
  await inTurns(
    Array.from({ length: 10 }, (_, index) => async () => {
      const key = `sk-estate-model-${index}-93b0`;
      const guid = await made("/models", { llm: `model-${index}`, provider: PROVIDER_TYPES[index % PROVIDER_TYPES.length], key });
      keys.set(guid, key);
    }),
  );
  await inTurns(Array.from({ length: 45 }, () => () => made("/skills", { name: "web-search", type: "web" })));
  await inTurns(
    Array.from(
      { length: 270 },
      (_, index) => () =>
        made(`/contexts/${contexts[index % contexts.length]}/context_sources`, { url: `https://docs.example.com/${index}.md` }),
    ),
  );
  const sharedDatasets = await inTurns(
    Array.from({ length: 170 }, (_, index) => () => made("/datasets", { name: `Shared set ${index}`, description: null, app: null })),
  );

  // Per App: Workflows, Datasets, Evals, Experiments, a fine-tune.
  const tuning = await numericId("providers", connections[0]!);
  const appDatasets = await inTurns(
    apps.map((app, number) => async () => {
      const tasks: (() => Promise<string>)[] = [
        ...Array.from({ length: 30 }, (_, index) => () => made("/workflows", { name: `Flow ${index}`, app: app.guid })),
        ...Array.from({ length: 20 }, (_, index) => () => made("/datasets", { name: `Set ${number}-${index}`, app: app.guid })),
      ];
      const results = await inTurns(tasks, 4);
      return results.slice(30);
    }),
    4,
  );
  await inTurns(
    apps.map((app, number) => async () => {
      const actions = (await api("GET", `/apps/${app.guid}/actions`)).body as { guid: string; name: string }[];
      const [answer, review] = [actions.find((action) => action.name === "Answer")!, actions.find((action) => action.name === "Review")!];
      const datasetOf = (index: number) =>
        index < 2
          ? sharedDatasets[number * 2 + index]!
          : index === 2
            ? appDatasets[(number + 1) % APPS]![0]!
            : appDatasets[number]![index % 20]!;
      const tasks: (() => Promise<string>)[] = [
        ...Array.from(
          { length: 12 },
          (_, index) => () =>
            made("/evals", {
              name: `Check ${index}`,
              action: index % 2 === 0 ? answer.guid : review.guid,
              eval_types: [{ guid: evalType }],
              dataset: datasetOf(index),
            }),
        ),
        ...Array.from(
          { length: 10 },
          (_, index) => () =>
            made("/experiments", { name: `Trial ${index}`, app: app.guid, primary_action: answer.guid, secondary_action: review.guid }),
        ),
      ];
      await inTurns(tasks, 4);
      const data = (await api("GET", `/apps/${app.guid}/data?limit=100`)).body.data as { guid: string }[];
      const ids = await Promise.all(data.slice(0, 10).map((record) => numericId("data", record.guid)));
      await made("/finetune", {
        name: `Tune ${number}`,
        app: app.guid,
        dataset: appDatasets[number]![0],
        data_ids: ids,
        base_model: "gpt-4o-mini",
        workspaceModelProviderId: tuning,
      });
    }),
    4,
  );
  // Each App's objects, its fine-tune's training Dataset among them, and the shared ones.
  return { made: APPS * (30 + 20 + 12 + 10 + 1 + 1) + 5 + 10 + 45 + 270 + 170, keys };
}

/** Every page of a list: an envelope (`has_next_page`) or a bare array (until a short page). */
async function everything(api: Api, path: string): Promise<unknown[]> {
  const all: unknown[] = [];
  const limit = 100;
  for (let skip = 0; ; skip += limit) {
    const { status, body } = await api("GET", `${path}${path.includes("?") ? "&" : "?"}skip=${skip}&limit=${limit}`);
    expect(status, path).toBe(200);
    const page = (Array.isArray(body) ? body : body.data) as unknown[];
    all.push(...page);
    if (Array.isArray(body) ? page.length < limit : !body.has_next_page) return all;
  }
}

/**
 * Everything the service holds that discover adopts, every field as the service answers it: the workspace's lists
 * (Apps, connections, Models, Skills, Datasets, Evals, Experiments, fine-tunes), each App's Workflows, each Context's
 * Sources and each Dataset's Items.
 */
export async function fullListing(url: string): Promise<Record<string, unknown>> {
  const api = estateApi(url);
  const apps = (await everything(api, "/apps")) as { guid: string }[];
  const workspace = (await api("GET", "/workspaces/current")).body.guid as string;
  const contexts = (await api("GET", `/workspaces/${workspace}/context`)).body as { guid: string }[];
  const datasets = (await everything(api, "/datasets/")) as { guid: string }[];
  const byGuid = async (parents: { guid: string }[], path: (guid: string) => string) =>
    Object.fromEntries(
      await inTurns(parents.map((parent) => async () => [parent.guid, await everything(api, path(parent.guid))] as const)),
    );
  return {
    apps,
    providers: (await api("GET", "/providers")).body,
    models: await everything(api, "/models"),
    skills: (await api("GET", "/skills")).body,
    datasets,
    evals: await everything(api, "/evals"),
    experiments: await everything(api, "/experiments"),
    fineTunes: await everything(api, "/finetune"),
    workflows: await byGuid(apps, (guid) => `/apps/${guid}/workflows`),
    contextSources: Object.fromEntries(
      await Promise.all(
        contexts.map(async (context) => [context.guid, (await api("GET", `/contexts/${context.guid}/context_sources`)).body]),
      ),
    ),
    datasetItems: await byGuid(datasets, (guid) => `/datasets/${guid}/items`),
  };
}
