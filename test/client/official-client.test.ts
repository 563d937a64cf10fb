/**
 * The service's official client, `@kluai/core` (0.0.46), driven against the emulator in-process. Where the
 * client agrees with the spec, each call's values are checked; where it does not (older paths, older field
 * names), the test pins the disagreement down with the request the client sent and the emulator's answer.
 * The spec wins: the emulator is not bent to the client. Where the spec says "not shown", the emulator uses
 * the client's names, so those calls work.
 *
 * The client has no base-URL option: its only switch is `KLU_ENV=dev`, which points it at
 * `http://localhost:4000/v1`. The emulator listens on a free port instead, so an axios adapter (the client's
 * HTTP library, the CommonJS copy the client itself requires) forwards that address to the emulator and records
 * every exchange. Absolute URLs the emulator hands out (a result URL) go through the same adapter; the one
 * request axios does not make, the stream (the client opens the streaming URL with its own EventSource over
 * node:http), goes to the streaming URL the emulator answered, which the test checks names the emulator first.
 * Nothing can reach the real service: with `KLU_ENV=dev` the client never names it, and the adapter refuses
 * any address but the emulator's.
 *
 * The client's index exports `Klu` alone (its type declarations name error classes it does not export), so
 * errors are told apart by their class name, which the client's errors answer as `name`.
 */
import type { ClientRequest } from "node:http";
import type { AxiosAdapter, AxiosError, AxiosResponse, AxiosStatic, InternalAxiosRequestConfig } from "axios";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Fixtures, type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";

const API_KEY = "gms_test_official_client";
const APP = "7b0c5a8e-1d2f-4e3a-9b4c-5d6e7f809a1b";
const SUMMARIZE = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d";
const CLASSIFY = "3b4c5d6e-7f8a-4b9c-8d1e-2f3a4b5c6d7e";
const HANDBOOK = "4c5d6e7f-8a9b-4c0d-9e2f-3a4b5c6d7e8f";
const MISSING = "00000000-0000-4000-8000-000000000000";

const FIXTURES: Fixtures = {
  workspaces: [
    {
      name: "Acme",
      slug: "acme",
      apiKey: API_KEY,
      apps: [
        {
          guid: APP,
          name: "Support",
          actions: [
            {
              guid: SUMMARIZE,
              name: "Summarize",
              prompt: "Summarize: {{text}}",
              model: "gpt-4o-mini",
              environments: ["Production", "Staging"],
            },
            { guid: CLASSIFY, name: "Classify", prompt: "Classify: {{text}}", model: "gpt-4o" },
          ],
        },
      ],
      contexts: [{ guid: HANDBOOK, name: "Handbook" }],
    },
  ],
};

/** Where the client sends its requests under `KLU_ENV=dev`. */
const CLIENT_BASE_URL = "http://localhost:4000/v1";

/** One request the client made and the emulator's answer, as seen on the wire. */
interface Exchange {
  method: string;
  path: string;
  sent: unknown;
  status: number;
  answer: unknown;
}

// The client's CommonJS build and the copy of axios it requires, not the ES module builds an `import` would load
// (the ES build of the client imports the ES build of axios, whose defaults the adapter below would not reach).
const { Klu } = require("@kluai/core") as typeof import("@kluai/core");
const axios: AxiosStatic = require("axios");

let emulator: RunningEmulator;
let klu: InstanceType<typeof Klu>;
let exchanges: Exchange[] = [];
const previousKluEnv = process.env.KLU_ENV;
const previousAdapter = axios.defaults.adapter;

/** Both bodies as the adapter sees them: JSON text (parsed here), or nothing. */
function parsed(body: unknown): unknown {
  return typeof body === "string" && body !== "" ? JSON.parse(body) : body;
}

function record(config: InternalAxiosRequestConfig, response: AxiosResponse): void {
  const request = response.request as ClientRequest;
  exchanges.push({
    method: request.method,
    path: request.path,
    sent: parsed(config.data),
    status: response.status,
    answer: parsed(response.data),
  });
}

/** Sends the client's requests for the dev address to the emulator, records each exchange, and refuses any other address. */
const toEmulator: AxiosAdapter = async (config) => {
  if (config.baseURL?.startsWith(CLIENT_BASE_URL)) config.baseURL = emulator.url + config.baseURL.slice(CLIENT_BASE_URL.length);
  if (!axios.getUri(config).startsWith(`${emulator.url}/`)) throw new Error("the client addressed something other than the emulator");
  const send = axios.getAdapter("http");
  try {
    const response = await send(config);
    record(config, response);
    return response;
  } catch (error) {
    const { response } = error as AxiosError;
    if (response) record(config, response);
    throw error;
  }
};

/** The last exchange, which the call under test made. */
function lastExchange(): Exchange {
  const exchange = exchanges.at(-1);
  if (!exchange) throw new Error("the client sent no request");
  return exchange;
}

/** Calls the emulator directly over HTTP (setup the client cannot do, and spec routes to compare with). */
function direct<T = any>(method: string, path: string, body?: unknown) {
  return callOverHttp<T>(emulator, method, path, body);
}

/** The internal numeric id of a record, from the emulator-only route outside `/v1` that fine-tune create needs. */
async function numericId(kind: "data" | "providers", guid: string): Promise<number> {
  const root = { url: emulator.url.slice(0, -"/v1".length), apiKey: API_KEY };
  return (await callOverHttp<{ id: number }>(root, "GET", `/_emulator/${kind}/${guid}`)).body.id;
}

/** Logs `count` Data records under the Summarize Action and answers their internal numeric ids. */
async function numericDataIds(count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let index = 0; index < count; index++) {
    const created = await direct("POST", "/data", { action: SUMMARIZE, input: `ticket ${index}`, output: `summary ${index}` });
    ids.push(await numericId("data", created.body.guid));
  }
  return ids;
}

beforeAll(async () => {
  process.env.KLU_ENV = "dev";
  axios.defaults.adapter = toEmulator;
  emulator = await startEmulator({ port: 0, fixtures: FIXTURES, fineTuneSeconds: 0 });
  klu = new Klu(API_KEY);
});

afterAll(async () => {
  axios.defaults.adapter = previousAdapter;
  if (previousKluEnv === undefined) delete process.env.KLU_ENV;
  else process.env.KLU_ENV = previousKluEnv;
  await emulator?.close();
});

beforeEach(() => {
  exchanges = [];
});

describe("the official client's connection", () => {
  it("sends the API key as a bearer token to the emulator's /v1 routes", async () => {
    const apps = await klu.apps.paginator.fetchAll();

    expect(apps.map((app) => app.name)).toEqual(["Support"]);
    expect(lastExchange()).toMatchObject({ method: "GET", path: "/v1/apps/?skip=0&limit=50", status: 200 });
    expect(lastExchange().answer).toMatchObject({ total_count: 1, has_next_page: false });

    await expect(new Klu("gms_test_wrong_key").apps.paginator.fetchAll()).rejects.toHaveProperty("name", "UnauthorizedError");
    expect(lastExchange()).toMatchObject({ status: 401, answer: { detail: "Invalid API key" } });
  });
});

describe("Apps through the official client", () => {
  it("creates, reads, lists, updates and deletes an App", async () => {
    const created = await klu.apps.create({ name: "Billing Desk", appType: "prompt", description: "Invoices" });
    expect(created).toMatchObject({ name: "Billing Desk", description: "Invoices", slug: "billing-desk" });
    expect(created.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/apps/", status: 200 });

    expect(await klu.apps.get(created.guid)).toMatchObject({ guid: created.guid, name: "Billing Desk" });
    const secondPage = await klu.apps.paginator.fetchSinglePage(2, 1);
    expect(secondPage.map((app) => app.name)).toEqual(["Billing Desk"]);
    expect(lastExchange()).toMatchObject({ path: "/v1/apps/?skip=1&limit=1", answer: { total_count: 2, has_next_page: false } });

    const updated = await klu.apps.update(created.guid, { name: "Billing", description: null as unknown as string });
    expect(updated).toMatchObject({ guid: created.guid, name: "Billing", description: null });
    expect(lastExchange()).toMatchObject({ method: "PUT", path: `/v1/apps/${created.guid}`, sent: { name: "Billing", description: null } });

    const deleted = await klu.apps.delete(created.guid);
    expect(deleted).toMatchObject({ guid: created.guid, name: "Billing" });
    await expect(klu.apps.get(created.guid)).rejects.toHaveProperty("name", "InstanceNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "App not found" } });
    expect((await klu.apps.paginator.fetchAll()).map((app) => app.name)).toEqual(["Support"]);
  });

  it("lists an App's Actions (the spec's Action summary: its action_type and model)", async () => {
    const actions = await klu.apps.getActions(APP);

    expect(actions.map((action) => [action.guid, action.name])).toEqual([
      [SUMMARIZE, "Summarize"],
      [CLASSIFY, "Classify"],
    ]);
    const answered = (lastExchange().answer as { action_type: string; model: string }[])[0];
    expect(answered).toMatchObject({ action_type: expect.any(String), model: "gpt-4o-mini" });
    // The client renames `model` to modelId.
    expect(actions[0]).toMatchObject({ modelId: "gpt-4o-mini", actionType: answered?.action_type });
  });

  it("disagrees on App Data: the client expects a bare array where the spec answers an envelope", async () => {
    await expect(klu.apps.getData(APP)).rejects.toHaveProperty("name", "UnknownKluError");
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/apps/${APP}/data`, status: 200 });
    expect(lastExchange().answer).toMatchObject({ data: expect.any(Array), total_count: expect.any(Number) });
  });

  it("reports a missing App's Actions as the client's AppNotFoundError", async () => {
    await expect(klu.apps.getActions(MISSING)).rejects.toThrow(`App with id ${MISSING} was not found.`);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "App not found" } });
  });
});

describe("Data through the official client", () => {
  it("creates, reads, updates and deletes a Data record", async () => {
    const created = await klu.data.create({
      actionGuid: SUMMARIZE,
      input: "a jammed printer",
      output: "printer jam",
      model: "gpt-4o",
      modelProvider: "openai",
      numInputTokens: 3,
      numOutputTokens: 2,
      latency: 0.5,
      metadata: { team: "support" },
    });
    expect(created).toMatchObject({ input: "a jammed printer", output: "printer jam", model: "gpt-4o" });
    expect(created).toMatchObject({ modelProvider: "openai", numInputTokens: 3, numOutputTokens: 2, latency: 0.5 });
    // The client sends metadata as the older `meta_data` (with its own `source`), and reads it back from `meta_data`.
    expect(lastExchange().sent).toMatchObject({ action: SUMMARIZE, meta_data: { team: "support", source: "SDK" } });
    expect(lastExchange().answer).toMatchObject({ metadata: { team: "support", source: "SDK" } });
    expect(created.metadata).toBeUndefined();

    expect(await klu.data.get(created.guid)).toMatchObject({ guid: created.guid, output: "printer jam", numInputTokens: 3 });

    const updated = await klu.data.update(created.guid, { output: "paper jam" });
    expect(updated).toMatchObject({ guid: created.guid, input: "a jammed printer", output: "paper jam" });
    expect(lastExchange()).toMatchObject({ method: "PUT", path: `/v1/data/${created.guid}`, status: 200 });

    await klu.data.delete(created.guid);
    expect(lastExchange()).toMatchObject({ method: "DELETE", status: 200 });
    await expect(klu.data.get(created.guid)).rejects.toHaveProperty("name", "InstanceNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Data not found" } });
  });

  it("reports a Data record naming a missing Action as a missing relationship", async () => {
    await expect(klu.data.create({ actionGuid: MISSING, input: "x", output: "y" })).rejects.toHaveProperty(
      "name",
      "InstanceRelationshipNotFoundError",
    );
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/data/", status: 404, answer: { detail: "Action not found" } });
  });
});

describe("Action runs through the official client", () => {
  it("runs an Action synchronously with its variables and gets the text and the feedback URL", async () => {
    const result = await klu.actions.prompt(SUMMARIZE, { text: "the printer is jammed" });

    expect(result.msg).toBe("Summarize: the printer is jammed");
    expect(result.feedbackUrl).toMatch(new RegExp(`^${emulator.url}/feedback/[0-9a-f-]{36}$`));
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: "/v1/actions/",
      sent: { action: SUMMARIZE, input: { text: "the printer is jammed" }, streaming: false, async_mode: false },
      answer: { streaming: false },
    });
    const dataGuid = result.feedbackUrl?.split("/").at(-1) ?? "";
    expect(await klu.data.get(dataGuid)).toMatchObject({ output: "Summarize: the printer is jammed", model: "gpt-4o-mini" });
  });

  it("links runs to a Session created through the client", async () => {
    const session = await klu.sessions.create({ action: SUMMARIZE, name: "Ticket 42" });
    await klu.actions.prompt(SUMMARIZE, { text: "first turn" }, { session: session.guid });
    await klu.actions.prompt(SUMMARIZE, { text: "second turn" }, { session: session.guid });

    const records = (await klu.sessions.getDataPaginator(session.guid).fetchAll()) as { output?: unknown }[];
    expect(records.map((record) => record.output)).toEqual(["Summarize: second turn", "Summarize: first turn"]);
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/sessions/${session.guid}/data?skip=0&limit=100` });
  });

  it("reports a missing Action as the client's ActionNotFoundError and a wrong input as a bad request", async () => {
    await expect(klu.actions.prompt(MISSING, { text: "x" })).rejects.toHaveProperty("name", "ActionNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Action not found" } });

    // A variable the template does not have is a bad request (a string is the input of a one-variable template).
    await expect(klu.actions.prompt(SUMMARIZE, { text: "x", tone: "dry" })).rejects.toHaveProperty("name", "BadRequestAPIError");
    expect(lastExchange()).toMatchObject({ status: 400, answer: { detail: "Unknown input variable: tone" } });
  });

  it("runs an Action asynchronously and reads the output at the result URL it answers", async () => {
    const started = await klu.actions.asyncPrompt(SUMMARIZE, { text: "later" });
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: "/v1/actions/",
      status: 200,
      sent: { async_mode: true, streaming: false },
    });
    const answer = lastExchange().answer as { generation_guid: string; data_guid: string };
    expect(started).toMatchObject({ msg: "", resultUrl: `${emulator.url}/generations/${answer.generation_guid}` });
    expect(started.data_guid).toBe(started.feedbackUrl?.split("/").at(-1));

    // The client GETs the result URL with its API key and returns the body.
    const result = await klu.actions.getAsyncPromptResult(started.resultUrl);
    expect(result).toMatchObject({ msg: "Summarize: later", status: "SUCCESS", guid: answer.generation_guid, action: SUMMARIZE });
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/generations/${answer.generation_guid}`, status: 200 });
  });

  it("streams a run: its EventSource opens the signed streaming URL without the API key, and the tokens join into the text", async () => {
    const streamed = await klu.actions.stream(SUMMARIZE, { text: "token by token" });
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: "/v1/actions/",
      status: 200,
      sent: { streaming: true, async_mode: false },
    });
    const { streaming_url } = lastExchange().answer as { streaming_url: string };
    // The one request that bypasses the adapter goes here: the emulator, on its own origin.
    expect(streaming_url.startsWith(`${emulator.url}/generations/`)).toBe(true);
    expect(streamed).toMatchObject({ msg: "", streaming: true });

    const tokens: (string | undefined)[] = [];
    for await (const token of streamed.streamingData) tokens.push(token);
    expect(tokens).toEqual(["Summarize: ", "token ", "by ", "token"]);
    expect(tokens.join("")).toBe("Summarize: token by token");
    // The run was logged as a Data record with the same text.
    expect(await klu.data.get(streamed.data_guid ?? "")).toMatchObject({ output: "Summarize: token by token" });
  });

  it("runs in an environment with the client's `environment` option; an Action not deployed there is a bad request", async () => {
    const staged = await klu.actions.prompt(SUMMARIZE, { text: "staged" }, { environment: "Staging" });
    expect(staged.msg).toBe("Summarize: staged");
    expect(lastExchange().sent).toMatchObject({ environment: "Staging" });
    expect((await direct("GET", `/data/${staged.data_guid}`)).body.metadata).toEqual({ environment: "Staging" });

    await expect(klu.actions.prompt(CLASSIFY, { text: "x" }, { environment: "Staging" })).rejects.toHaveProperty(
      "name",
      "BadRequestAPIError",
    );
    expect(lastExchange()).toMatchObject({ status: 400, answer: { detail: "Action is not deployed to Staging" } });
  });

  it("does not deploy: POST /actions/{guid}/deploy is not a spec route (environments come from the fixtures)", async () => {
    await expect(klu.actions.deploy(CLASSIFY, "v1", "Staging")).rejects.toHaveProperty("name", "ActionNotFoundError");
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: `/v1/actions/${CLASSIFY}/deploy`,
      sent: { version: "v1", environment: "Staging" },
      status: 404,
    });
  });

  it("does not reach the emulator for the Action routes the spec does not show", async () => {
    await expect(klu.actions.get(SUMMARIZE)).rejects.toHaveProperty("name", "InstanceNotFoundError");
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/actions/${SUMMARIZE}`, status: 404 });
    await expect(klu.actions.getData(SUMMARIZE)).rejects.toHaveProperty("name", "WorkspaceOrUserNotFoundError");
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/actions/${SUMMARIZE}/data`, status: 404 });
  });
});

describe("Sessions through the official client", () => {
  it("creates, reads, lists by external user and deletes a Session", async () => {
    const created = await klu.sessions.create({ action: CLASSIFY, name: "Chat", extUserId: "user-7" });
    expect(created).toMatchObject({ name: "Chat", action: CLASSIFY, ext_user_id: "user-7" });
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/sessions/", sent: { action: CLASSIFY, extUserId: "user-7" } });

    expect(await klu.sessions.get(created.guid)).toMatchObject({ guid: created.guid, name: "Chat", action: CLASSIFY });
    const listed = await klu.sessions.paginator.fetchAll(undefined, { extUserId: "user-7" });
    expect(listed.map((session) => session.guid)).toEqual([created.guid]);
    expect(lastExchange().path).toBe("/v1/sessions/?extUserId=user-7&skip=0&limit=50");

    await klu.sessions.delete(created.guid);
    expect(lastExchange()).toMatchObject({ method: "DELETE", status: 200, answer: { message: `Session ${created.guid} deleted` } });
    await expect(klu.sessions.get(created.guid)).rejects.toHaveProperty("name", "InstanceNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Session not found" } });
  });

  it("sends its `action` list filter, which the spec does not have: the emulator lists every Session", async () => {
    const classify = await klu.sessions.create({ action: CLASSIFY, name: "By Classify" });
    const summarize = await klu.sessions.create({ action: SUMMARIZE, name: "By Summarize" });
    const listed = await klu.sessions.paginator.fetchAll(undefined, { action: CLASSIFY });
    expect(lastExchange().path).toBe(`/v1/sessions/?action=${CLASSIFY}&skip=0&limit=50`);
    // GET /sessions takes extUserId, skip and limit only: the spec wins over the client.
    expect(listed.map((session) => session.guid)).toEqual(expect.arrayContaining([classify.guid, summarize.guid]));
    for (const session of [classify, summarize]) await klu.sessions.delete(session.guid);
  });

  it("has no Session update (the client refuses it before sending anything)", async () => {
    const sessions = klu.sessions as unknown as { update(): Promise<never> };
    await expect(sessions.update()).rejects.toHaveProperty("name", "NotImplementedError");
    expect(exchanges).toEqual([]);
  });
});

describe("Feedback through the official client", () => {
  it("rates a generation by its Data GUID (POST /feedback) and reads, updates and deletes the Feedback", async () => {
    const run = await klu.actions.prompt(CLASSIFY, { text: "refund please" });
    const dataGuid = run.data_guid ?? "";
    expect(run.feedbackUrl).toBe(`${emulator.url}/feedback/${dataGuid}`);

    const created = await klu.feedback.create({ dataGuid, type: "rating", value: "Positive", source: "sdk", metadata: { by: "qa" } });
    expect(created).toMatchObject({ dataGuid, type: "rating", value: 2, source: "sdk" });
    // The client sends metadata as the legacy `meta_data` (taken) and reads it back from `meta_data`, where the
    // spec's Feedback answers `metadata`.
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: "/v1/feedback/",
      sent: { data: dataGuid, value: "Positive", meta_data: { by: "qa" } },
      answer: { metadata: { by: "qa" } },
    });
    expect(created.metadata).toBeUndefined();

    expect(await klu.feedback.get(created.guid)).toMatchObject({ guid: created.guid, dataGuid, value: 2 });

    const updated = await klu.feedback.update(created.guid, { type: "rating", value: "Negative", source: "sdk" });
    expect(updated).toMatchObject({ guid: created.guid, value: 1 });
    expect(lastExchange().answer).toMatchObject({ metadata: null });

    await klu.feedback.delete(created.guid);
    await expect(klu.feedback.get(created.guid)).rejects.toHaveProperty("name", "InstanceNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Feedback not found" } });
  });

  it("labels a generation through its feedback URL (POST /feedback/{data guid})", async () => {
    const run = await klu.actions.prompt(CLASSIFY, { text: "wrong invoice" });
    const dataGuid = run.data_guid ?? "";

    // The Data GUID travels in the path, so the body leaves out the dataGuid the client's type asks for.
    const label = { type: "correction", value: "Billing", source: "agent", metadata: { ticket: 9 } } as unknown as Parameters<
      typeof klu.feedback.create
    >[0];
    const created = await klu.feedback.create(label, dataGuid);
    expect(created).toMatchObject({ dataGuid, type: "correction", value: "Billing" });
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: `/v1/feedback/${dataGuid}`,
      sent: { meta_data: { ticket: 9 } },
      status: 200,
      answer: { metadata: { ticket: 9 } },
    });
  });

  it("reports a rating the spec does not take as a bad request", async () => {
    const run = await klu.actions.prompt(CLASSIFY, { text: "ok" });
    const dataGuid = run.data_guid ?? "";

    await expect(klu.feedback.create({ dataGuid, type: "rating", value: "5", source: "sdk" })).rejects.toHaveProperty(
      "name",
      "BadRequestAPIError",
    );
    expect(lastExchange()).toMatchObject({ status: 400, answer: { detail: [{ loc: ["body", "value"], type: "custom" }] } });
  });
});

describe("fine-tunes through the official client", () => {
  async function createFineTune(name: string): Promise<string> {
    const provider = await direct("POST", "/providers", { provider: "openai", key: "sk-test-fine-tune", name: "Tuning" });
    const providerId = await numericId("providers", provider.body.guid);
    const created = await direct("POST", "/finetune", {
      name,
      app: APP,
      data_ids: await numericDataIds(10),
      base_model: "gpt-4o-mini",
      workspaceModelProviderId: providerId,
    });
    expect(created).toMatchObject({ status: 200, body: { status: "processing" } });
    return created.body.guid;
  }

  it("cannot create a fine-tune (the client refuses before sending anything)", async () => {
    const fineTunes = klu.fineTune as unknown as { create(): Promise<never> };
    await expect(fineTunes.create()).rejects.toHaveProperty("name", "NotImplementedError");
    expect(exchanges).toEqual([]);
  });

  it("reads, renames and deletes a fine-tune; its status reader looks for an older field name", async () => {
    const guid = await createFineTune("Support tone");

    expect(await klu.fineTune.get(guid)).toMatchObject({ guid, name: "Support tone", app: APP, base_model: "gpt-4o-mini" });

    const status = await klu.fineTune.readStatus(guid);
    expect(status).toEqual({ status: "succeeded", openaiFineTuneName: undefined });
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/finetune/${guid}/status/`, status: 200 });
    expect(lastExchange().answer).toEqual({ status: "succeeded", vendor_finetune_name: `ftjob-${guid.replaceAll("-", "")}` });

    expect(await klu.fineTune.update(guid, { name: "Support voice" })).toMatchObject({ guid, name: "Support voice" });

    await klu.fineTune.delete(guid);
    await expect(klu.fineTune.readStatus(guid)).rejects.toHaveProperty("name", "FineTuneNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404 });
  });

  it("disagrees on fine-tune processing: POST /finetune/process/ is an older path", async () => {
    const guid = await createFineTune("Processed elsewhere");

    await expect(klu.fineTune.process(guid, "gpt-4o-mini")).rejects.toHaveProperty("name", "FineTuneNotFoundError");
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: "/v1/finetune/process/",
      status: 404,
      answer: { detail: expect.stringMatching(/^Not Found: no route matches /) },
    });
  });
});

describe("Models and Providers through the official client", () => {
  it("creates a Model (the persistence-shaped answer with the key), lists, reads and deletes it", async () => {
    const created = await klu.models.create({ llm: "gpt-4o", provider: "openai", key: "sk-test-model", default: false });
    expect(lastExchange()).toMatchObject({
      method: "POST",
      path: "/v1/models/",
      sent: { llm: "gpt-4o", provider: "openai", default: false },
      status: 200,
    });
    expect(created).toMatchObject({ llm: "gpt-4o", default: false, providerId: expect.any(Number), key: "sk-test-model" });
    const guid = created.guid;

    const listed = await klu.models.getAllModels();
    expect(lastExchange()).toMatchObject({ method: "GET", path: "/v1/models/?skip=0&limit=500", status: 200 });
    expect(listed).toContainEqual(expect.objectContaining({ guid, llm: "gpt-4o", provider_name: "openai" }));

    expect(await klu.models.get(guid)).toMatchObject({ guid, llm: "gpt-4o", provider_name: "openai", default: false });
    await klu.models.delete(guid);
    await expect(klu.models.get(guid)).rejects.toHaveProperty("name", "InstanceNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Model not found" } });
  });

  it("has no Model update (the client refuses it before sending anything)", async () => {
    const models = klu.models as unknown as { update(): Promise<never> };
    await expect(models.update()).rejects.toHaveProperty("name", "NotImplementedError");
    expect(exchanges).toEqual([]);
  });

  it("disagrees on provider key validation: POST /models/validate is not a spec route", async () => {
    await expect(klu.models.validateProviderApiKey("sk-test-validate", 1)).rejects.toHaveProperty("name", "UnknownModelProviderError");
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/models/validate", status: 404 });
  });

  it("disagrees on every Provider route: the client calls /models/provider/, the spec serves /providers", async () => {
    const connection = await direct("POST", "/providers", { provider: "openai", key: "sk-test-provider", name: "Main" });
    const guid: string = connection.body.guid;

    await expect(klu.models.addProvider("openai", "sk-test-provider", undefined, "Second", false)).rejects.toHaveProperty(
      "name",
      "UnknownKluError",
    );
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/models/provider/", status: 404 });
    await expect(klu.models.getProviders()).rejects.toHaveProperty("name", "UnknownKluError");
    expect(lastExchange()).toMatchObject({ method: "GET", path: "/v1/models/provider/", status: 400 });
    await expect(klu.models.updateProvider(guid, "Renamed")).rejects.toHaveProperty("name", "UnknownKluError");
    expect(lastExchange()).toMatchObject({ method: "PUT", path: `/v1/models/provider/${guid}`, status: 404 });
    await expect(klu.models.deleteProvider(guid)).rejects.toHaveProperty("name", "UnknownKluError");
    expect(lastExchange()).toMatchObject({ method: "DELETE", path: `/v1/models/provider/${guid}`, status: 404 });

    // The spec's routes for the same connection answer, unchanged.
    expect((await direct("GET", `/providers/${guid}`)).body).toMatchObject({ guid, nickname: "Main" });
  });
});

describe("Experiments through the official client", () => {
  async function createExperiment(name: string): Promise<string> {
    const created = await direct("POST", "/experiments", { name, app: APP, primary_action: SUMMARIZE, secondary_action: CLASSIFY });
    expect(created.status).toBe(200);
    return created.body.guid;
  }

  it("disagrees on Experiment create: the client sends app_guid and action_*_guid", async () => {
    const create = klu.experiments.create({ name: "Tone", appGuid: APP, actionPrimaryGuid: SUMMARIZE, actionSecondaryGuid: CLASSIFY });
    await expect(create).rejects.toHaveProperty("name", "BadRequestAPIError");
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/experiments/", status: 400 });
    expect(lastExchange().sent).toEqual({ name: "Tone", app_guid: APP, action_primary_guid: SUMMARIZE, action_secondary_guid: CLASSIFY });
  });

  it("reads, renames, reassigns, prompts and deletes an Experiment", async () => {
    const guid = await createExperiment("Summaries vs labels");

    const read = await klu.experiments.get(guid);
    expect(read).toMatchObject({ guid, name: "Summaries vs labels", status: "active" });
    // The client reads the Actions from app_guid and action_*_guid; the emulator answers the spec's create names.
    expect(lastExchange().answer).toMatchObject({ app: APP, primary_action: SUMMARIZE, secondary_action: CLASSIFY });
    expect(read.appGuid).toBeUndefined();

    expect(await klu.experiments.update(guid, { name: "A/B" })).toMatchObject({ guid, name: "A/B" });
    // Update field names are not shown in the spec: the client's action_*_guid are taken.
    await klu.experiments.update(guid, { actionPrimaryGuid: CLASSIFY, actionSecondaryGuid: SUMMARIZE });
    expect(lastExchange()).toMatchObject({
      sent: { action_primary_guid: CLASSIFY, action_secondary_guid: SUMMARIZE },
      answer: { primary_action: CLASSIFY, secondary_action: SUMMARIZE },
    });
    await klu.experiments.update(guid, { actionPrimaryGuid: SUMMARIZE, actionSecondaryGuid: CLASSIFY });

    const first = await klu.experiments.prompt(guid, { text: "hello" });
    expect(first).toMatchObject({ msg: "Summarize: hello", variant: "primary", action: SUMMARIZE });
    const second = await klu.experiments.prompt(guid, { text: "hello" });
    expect(second).toMatchObject({ msg: "Classify: hello", variant: "secondary", action: CLASSIFY });

    await klu.experiments.delete(guid);
    await expect(klu.experiments.prompt(guid, { text: "gone" })).rejects.toHaveProperty("name", "ExperimentNotFoundError");
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Experiment not found" } });
  });

  it("forces an Action with the client's forceAction (sent as force_action); another Action is a bad request", async () => {
    const guid = await createExperiment("Forced");

    const result = await klu.experiments.prompt(guid, { text: "pick secondary" }, { forceAction: CLASSIFY });
    expect(lastExchange().sent).toMatchObject({ force_action: CLASSIFY });
    expect(result).toMatchObject({ msg: "Classify: pick secondary", variant: "secondary", action: CLASSIFY });
    // The forced prompt did not take a turn: the first unforced one goes to the primary Action.
    expect(await klu.experiments.prompt(guid, { text: "next" })).toMatchObject({ variant: "primary", action: SUMMARIZE });

    await expect(klu.experiments.prompt(guid, { text: "x" }, { forceAction: MISSING })).rejects.toHaveProperty(
      "name",
      "BadRequestAPIError",
    );
    expect(lastExchange()).toMatchObject({ status: 400, answer: { detail: "Action is not one of the Experiment's Actions" } });
  });

  it("prompts an Experiment asynchronously and streaming, as an Action run", async () => {
    const guid = await createExperiment("Modes");

    const started = await klu.experiments.asyncPrompt(guid, { text: "later" });
    expect(started).toMatchObject({ msg: "", variant: "primary", action: SUMMARIZE });
    expect(await klu.experiments.getAsyncPromptResult(started.resultUrl)).toMatchObject({
      msg: "Summarize: later",
      status: "SUCCESS",
      experiment: guid,
      variant: "primary",
    });

    const streamed = await klu.experiments.stream(guid, { text: "one two" });
    expect((lastExchange().answer as { streaming_url: string }).streaming_url.startsWith(`${emulator.url}/`)).toBe(true);
    expect(streamed).toMatchObject({ variant: "secondary", action: CLASSIFY });
    const tokens: (string | undefined)[] = [];
    for await (const token of streamed.streamingData) tokens.push(token);
    expect(tokens.join("")).toBe("Classify: one two");
  });
});

describe("Workspaces and Contexts through the official client: older paths", () => {
  it("disagrees on every Workspace route: the client calls /workspace/, the spec serves /workspaces/", async () => {
    const current = await direct("GET", "/workspaces/current");
    const workspace: string = current.body.guid;
    expect(current.body).toMatchObject({ name: "Acme", slug: "acme" });

    await expect(klu.workspaces.get(workspace)).rejects.toHaveProperty("name", "InstanceNotFoundError");
    expect(lastExchange()).toMatchObject({
      method: "GET",
      path: `/v1/workspace/${workspace}`,
      status: 404,
      answer: { detail: expect.stringMatching(/^Not Found: no route matches /) },
    });
    await expect(klu.workspaces.getCurrent()).rejects.toHaveProperty("name", "WorkspaceOrUserNotFoundError");
    expect(lastExchange()).toMatchObject({ method: "GET", path: "/v1/workspace/current", status: 404 });
    await expect(klu.workspaces.getApps(workspace)).rejects.toHaveProperty("name", "WorkspaceOrUserNotFoundError");
    expect(lastExchange()).toMatchObject({ path: `/v1/workspace/${workspace}/apps`, status: 404 });
    await expect(klu.workspaces.getContexts(workspace)).rejects.toHaveProperty("name", "WorkspaceOrUserNotFoundError");
    expect(lastExchange()).toMatchObject({ path: `/v1/workspace/${workspace}/context`, status: 404 });
    await expect(klu.workspaces.getModels(workspace)).rejects.toHaveProperty("name", "WorkspaceOrUserNotFoundError");
    expect(lastExchange()).toMatchObject({ path: `/v1/workspace/${workspace}/models`, status: 404 });
    await expect(klu.workspaces.paginator.fetchAll()).rejects.toMatchObject({ response: { status: 404 } });
    expect(lastExchange()).toMatchObject({ path: "/v1/workspace/?skip=0&limit=50", status: 404 });

    // The spec's route for the same question answers.
    expect((await direct("GET", `/workspaces/${workspace}/apps`)).body).toContainEqual(
      expect.objectContaining({ guid: APP, name: "Support" }),
    );
  });

  it("disagrees on Context Documents: the client calls /context/{guid}/documents, the spec /contexts/{guid}/documents", async () => {
    await expect(klu.contexts.addDoc(HANDBOOK, { content: "Refunds take 5 days." })).rejects.toHaveProperty("name", "ContextNotFoundError");
    expect(lastExchange()).toMatchObject({ method: "POST", path: `/v1/context/${HANDBOOK}/documents`, status: 404 });
    await expect(klu.contexts.listDocs(HANDBOOK)).rejects.toHaveProperty("name", "ContextNotFoundError");
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/context/${HANDBOOK}/documents`, status: 404 });

    expect((await direct("GET", `/contexts/${HANDBOOK}/documents`)).status).toBe(200);
  });
});
