/**
 * The objects the fuzzing run reaches: the fixtures of its workspace, then through the API at least one object of
 * every collection a route names, so that a generated request can name a GUID that exists. Each collection has
 * `kept` objects, for every route but DELETE, and `doomed` ones, which only the DELETE routes are given: a delete
 * that lands early cannot take the object the other routes of that collection are reaching.
 */
import { randomUUID } from "node:crypto";

/** GUIDs by collection, the names the routes' path segments use (`apps`, `context_sources`, `runs`, …). */
export type Seeded = Map<string, { kept: string[]; doomed: string[] }>;

/** The keys the seeded connections and Models are given, to be masked wherever they show. */
export const SEEDED_KEY = /sk-fuzz-[0-9a-f-]{36}/g;
const seededKey = () => `sk-fuzz-${randomUUID()}`;

/** The fixtures' objects, by GUID chosen here, so that the seeding below can name them. */
const ids = {
  app: randomUUID(),
  doomedApp: randomUUID(),
  echo: randomUUID(),
  reply: randomUUID(),
  workflow: randomUUID(),
  context: randomUUID(),
  doomedContext: randomUUID(),
  skill: randomUUID(),
  data: Array.from({ length: 12 }, () => randomUUID()),
};

/** The workspace the emulator starts with: an App with two Actions, a Workflow of one block and Data records. */
export function fuzzFixtures(apiKey: string) {
  return {
    workspaces: [
      {
        name: "Fuzz",
        slug: "fuzz",
        apiKey,
        apps: [
          {
            guid: ids.app,
            name: "Fuzzed",
            actions: [
              { guid: ids.echo, name: "Echo", prompt: "Echo {{text}}", model: "gpt-4o-mini" },
              { guid: ids.reply, name: "Reply", prompt: "Reply to {{text}}", model: "gpt-4o-mini" },
            ],
            workflows: [{ guid: ids.workflow, name: "Relay", blocks: [{ name: "first", action: "Echo" }] }],
            data: ids.data.map((guid, n) => ({ guid, action: "Echo", input: { text: `q${n}` }, output: `a${n}` })),
          },
          { guid: ids.doomedApp, name: "Doomed" },
        ],
        contexts: [
          { guid: ids.context, name: "Handbook" },
          { guid: ids.doomedContext, name: "Doomed" },
        ],
        skills: [
          {
            guid: ids.skill,
            name: "web-search",
            type: "web",
            metadata: [{ name: "engine", required: true, value: "bing", type: "string" }],
          },
        ],
      },
    ],
    evalTypes: [{ name: "Exact match" }],
  };
}

/** Makes the rest through the API at `url` (the emulator's `/v1` base) and returns every collection's GUIDs. */
export async function seedObjects(url: string, apiKey: string): Promise<Seeded> {
  /** A route of `/v1`, or with `base` the emulator's own (`/_emulator/...`, outside it). */
  const call = async (method: string, path: string, body?: unknown, base = url) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`fuzz seed: ${method} ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  const guidOf = async (path: string, body: unknown) => (await call("POST", path, body)).guid as string;
  /** Two objects from `make`: the first kept, the second doomed. */
  const pair = async (make: (n: number) => Promise<string>) => ({ kept: [await make(0)], doomed: [await make(1)] });

  const seeded: Seeded = new Map();
  seeded.set("apps", { kept: [ids.app], doomed: [ids.doomedApp] });
  seeded.set("contexts", { kept: [ids.context], doomed: [ids.doomedContext] });
  seeded.set("skills", { kept: [ids.skill], doomed: [await guidOf("/skills", { name: "web-search", type: "web" })] });
  seeded.set("workflows", { kept: [ids.workflow], doomed: [await guidOf("/workflows", { name: "Doomed", app: ids.app })] });
  seeded.set("data", { kept: ids.data.slice(0, 10), doomed: ids.data.slice(10) });
  seeded.set("actions", { kept: [ids.echo, ids.reply], doomed: [] });
  seeded.set(
    "providers",
    await pair((n) => guidOf("/providers", { provider: n === 0 ? "openai" : "mistral", key: seededKey(), name: `P${n}` })),
  );
  seeded.set("models", await pair((n) => guidOf("/models", { llm: `gpt-fuzz-${n}`, provider: "openai", key: seededKey() })));
  seeded.set("datasets", await pair((n) => guidOf("/datasets", { name: `Set ${n}`, app: ids.app, data: ids.data.slice(0, 2) })));
  const evalType = ((await call("GET", "/evals/types")) as unknown as { guid: string }[])[0]?.guid;
  seeded.set("evals", await pair((n) => guidOf("/evals", { name: `Eval ${n}`, action: ids.echo, eval_types: [{ guid: evalType }] })));
  seeded.set(
    "experiments",
    await pair((n) => guidOf("/experiments", { name: `Exp ${n}`, app: ids.app, primary_action: ids.echo, secondary_action: ids.reply })),
  );
  seeded.set(
    "context_sources",
    await pair((n) => guidOf(`/contexts/${ids.context}/context_sources`, { url: `https://example.com/${n}.md` })),
  );
  const documents = async () =>
    ((await call("POST", `/contexts/${ids.context}/documents`, { content: "A short page." })).docs as string[])[0]!;
  seeded.set("documents", await pair(documents));
  seeded.set("sessions", await pair((n) => guidOf("/sessions", { action: ids.echo, name: `S${n}` })));
  seeded.set("feedback", await pair((n) => guidOf("/feedback", { data: ids.data[n], type: "rating", value: 2, source: "fuzz" })));
  // Fine-tune create takes internal numeric ids, which only the emulator's own routes tell.
  const numericId = async (collection: string, guid: string) =>
    (await call("GET", `/_emulator/${collection}/${guid}`, undefined, new URL(url).origin)).id as number;
  const tuning = await numericId("providers", seeded.get("providers")!.kept[0]!);
  const dataIds = await Promise.all(ids.data.slice(0, 10).map((guid) => numericId("data", guid)));
  seeded.set(
    "finetune",
    await pair((n) =>
      guidOf("/finetune", {
        name: `Tune ${n}`,
        app: ids.app,
        dataset: seeded.get("datasets")!.kept[0],
        data_ids: dataIds,
        base_model: "gpt-4o-mini",
        workspaceModelProviderId: tuning,
      }),
    ),
  );
  const generation = async () =>
    (await call("POST", "/actions", { action: ids.echo, input: { text: "hi" }, async_mode: true })).generation_guid as string;
  seeded.set("generations", { kept: [await generation()], doomed: [] });
  const run = async () => (await call("POST", `/workflows/${ids.workflow}/trigger`, { input: [{ text: "hi" }] })).run_guid as string;
  seeded.set("runs", { kept: [await run()], doomed: [] });
  const upload = (await call("POST", "/files/upload", { data: Buffer.from("fuzz").toString("base64") })).url as string;
  seeded.set("files", { kept: [new URL(upload).pathname.split("/").pop()!], doomed: [] });
  seeded.set("workspaces", { kept: [(await call("GET", "/workspaces/current")).guid as string], doomed: [] });
  for (const [collection, { kept }] of seeded)
    if (kept.some((guid) => typeof guid !== "string")) throw new Error(`fuzz seed: no GUID for ${collection}`);
  return seeded;
}

/** Body fields that name another object (a GUID in the document), by the collection they name. */
const BODY_REFERENCES: Record<string, string> = {
  app: "apps",
  action: "actions",
  primary_action: "actions",
  secondary_action: "actions",
  action_primary_guid: "actions",
  action_secondary_guid: "actions",
  force_action: "actions",
  session: "sessions",
  experiment: "experiments",
  workflow: "workflows",
  dataset: "datasets",
  data: "data",
  contextGuid: "contexts",
};
/** The collection a path parameter names, where the segment before it is not that collection's own. */
const PATH_ALIASES: Record<string, string> = { app: "apps", result: "runs" };
/** Operations whose GUID parameter names another collection than its path says: the interface's Feedback on a Data record. */
const OPERATION_COLLECTIONS: Record<string, string> = { "POST /feedback/{guid}": "data" };
/** The keys of a path item that are operations (others are `servers`, `parameters`, …). */
const HTTP_METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"]);
/** How often a generated request takes a seeded GUID rather than one Schemathesis invents. */
const PROBABILITY = 0.85;

export interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: unknown }> } }>>;
  components?: { schemas?: Record<string, unknown> };
}

/** The collection each path parameter of `path` names: the segment before it (`/apps/{guid}` names apps). */
export function pathCollections(path: string): Map<string, string> {
  const segments = path.split("/");
  const named = new Map<string, string>();
  segments.forEach((segment, n) => {
    const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
    if (parameter === undefined) return;
    const before = segments[n - 1] ?? "";
    named.set(parameter, PATH_ALIASES[before] ?? before);
  });
  return named;
}

/**
 * Schemathesis's configuration (TOML) that gives every operation the seeded GUIDs: a dictionary per collection,
 * and per operation its path parameters and the body fields that name another object bound to them. A DELETE's
 * last path parameter takes the doomed objects, every other one the kept; with PROBABILITY, so that invented GUIDs
 * (404) are still tried; OPERATION_COLLECTIONS names the operations whose GUID is of another collection.
 */
export function seededConfig(document: OpenApiDocument, seeded: Seeded, preamble: string): string {
  const lines = [preamble];
  const dictionaries = new Set<string>();
  const bind = (dictionary: string) => {
    const [state, collection] = dictionary.split(":") as ["kept" | "doomed", string];
    const guids = seeded.get(collection)?.[state] ?? [];
    if (guids.length === 0) return undefined;
    if (!dictionaries.has(dictionary)) {
      dictionaries.add(dictionary);
      lines.push(`[dictionaries."${dictionary}"]`, `values = ${JSON.stringify(guids)}`);
    }
    return `{ dictionary = "${dictionary}", probability = ${PROBABILITY} }`;
  };
  const schemas = document.components?.schemas ?? {};
  const resolve = (schema: unknown) => {
    const ref = (schema as { $ref?: string } | undefined)?.$ref;
    return (ref === undefined ? schema : schemas[ref.split("/").pop()!]) as { properties?: Record<string, unknown> } | undefined;
  };
  const operations: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method)) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const bindings: string[] = [];
      const parameters = [...pathCollections(path)];
      parameters.forEach(([parameter, collection], n) => {
        const doomed = method === "delete" && n === parameters.length - 1;
        const named = OPERATION_COLLECTIONS[name] ?? collection;
        const binding = bind(`${doomed ? "doomed" : "kept"}:${named}`);
        if (binding) bindings.push(`"path.${parameter}" = ${binding}`);
      });
      const body = resolve(operation.requestBody?.content?.["application/json"]?.schema);
      for (const [field, schema] of Object.entries(body?.properties ?? {})) {
        const collection = BODY_REFERENCES[field];
        if (collection === undefined || !JSON.stringify(schema).includes('"format":"uuid"')) continue;
        const binding = bind(`kept:${collection}`);
        if (binding) bindings.push(`"body.${field}" = ${binding}`);
      }
      if (bindings.length > 0)
        operations.push("[[operations]]", `include-name = ${JSON.stringify(name)}`, `parameters = { ${bindings.join(", ")} }`);
    }
  }
  return `${[...lines, ...operations].join("\n")}\n`;
}
