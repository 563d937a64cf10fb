/**
 * The service's official client, `@kluai/core` (0.0.19: the newest release whose dependencies the npm registry
 * serves), driven against the emulator in-process. Where the client agrees with the spec, each call's values are
 * checked; where it does not (older paths, older field names), the test pins the disagreement down with the
 * request the client sent and the emulator's answer. The spec wins: the emulator is not bent to the client.
 *
 * The client has no base-URL option: its only switch is `KLU_ENV=dev`, which points it at
 * `http://localhost:4000/v1`. The emulator listens on a free port instead, so an axios adapter (the client's
 * HTTP library, the CommonJS copy the client itself requires) forwards that address to the emulator and records
 * every exchange. Nothing can reach the real service: with `KLU_ENV=dev` the client never names it, and the
 * adapter refuses any address but the emulator's.
 */
import type { ClientRequest } from "node:http";
import Klu from "@kluai/core";
import { ActionNotFoundError, InvalidPromptResponseError } from "@kluai/core/dist/cjs/actions/errors";
import { _getStreamingData } from "@kluai/core/dist/cjs/api/sse/sseClientServer";
import {
  BadRequestAPIError,
  InstanceNotFoundError,
  InstanceRelationshipNotFoundError,
  NotImplementedError,
  StreamingError,
  UnauthorizedError,
  UnknownKluError,
} from "@kluai/core/dist/cjs/common/errors";
import { ContextNotFoundError } from "@kluai/core/dist/cjs/contexts/errors";
import { ExperimentNotFoundError } from "@kluai/core/dist/cjs/experiments/errors";
import { Feedback } from "@kluai/core/dist/cjs/feedback";
import { FineTuneNotFoundError } from "@kluai/core/dist/cjs/fineTune/errors";
import { UnknownModelProviderError } from "@kluai/core/dist/cjs/models/errors";
import { WorkspaceOrUserNotFoundError } from "@kluai/core/dist/cjs/workspaces/errors";
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

// The copy of axios the client requires (CommonJS), not the ES module build an `import` would load.
const axios: AxiosStatic = require("axios");

let emulator: RunningEmulator;
let klu: Klu;
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

    await expect(new Klu("gms_test_wrong_key").apps.paginator.fetchAll()).rejects.toThrow(UnauthorizedError);
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
    await expect(klu.apps.get(created.guid)).rejects.toThrow(InstanceNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "App not found" } });
    expect((await klu.apps.paginator.fetchAll()).map((app) => app.name)).toEqual(["Support"]);
  });

  it("lists an App's Actions (the spec's Action summary: action_type, not the client's agent_type)", async () => {
    const actions = await klu.apps.getActions(APP);

    expect(actions.map((action) => [action.guid, action.name])).toEqual([
      [SUMMARIZE, "Summarize"],
      [CLASSIFY, "Classify"],
    ]);
    expect(actions[0]).toMatchObject({ model: "gpt-4o-mini", actionType: undefined });
    expect((lastExchange().answer as { action_type: string }[])[0]?.action_type).toEqual(expect.any(String));
  });

  it("disagrees on App Data: the client expects a bare array where the spec answers an envelope", async () => {
    await expect(klu.apps.getData(APP)).rejects.toThrow(UnknownKluError);
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
    await expect(klu.data.get(created.guid)).rejects.toThrow(InstanceNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Data not found" } });
  });

  it("reports a Data record naming a missing Action as a missing relationship", async () => {
    await expect(klu.data.create({ actionGuid: MISSING, input: "x", output: "y" })).rejects.toThrow(InstanceRelationshipNotFoundError);
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
    await expect(klu.actions.prompt(MISSING, { text: "x" })).rejects.toThrow(ActionNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Action not found" } });

    await expect(klu.actions.prompt(SUMMARIZE, "no variables given")).rejects.toThrow(BadRequestAPIError);
    expect(lastExchange()).toMatchObject({
      status: 400,
      answer: { detail: "Input must be an object with a value for each variable: text" },
    });
  });

  it("disagrees on asynchronous runs: the client wants result_url, the emulator answers generation_guid", async () => {
    await expect(klu.actions.asyncPrompt(SUMMARIZE, { text: "later" })).rejects.toThrow(InvalidPromptResponseError);
    const answer = lastExchange().answer as { msg: string; generation_guid: string; result_url?: string };
    expect(lastExchange()).toMatchObject({ status: 200, sent: { async_mode: true, streaming: false } });
    expect(answer).toMatchObject({ msg: "", generation_guid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(answer.result_url).toBeUndefined();

    // The client's reader for a result URL works on the emulator's generation route.
    const result = await klu.actions.getAsyncPromptResult(`${emulator.url}/generations/${answer.generation_guid}`);
    expect(result).toMatchObject({ msg: "Summarize: later", status: "completed" });
  });

  it("disagrees on streaming runs: field name, bearer key and end marker", async () => {
    await expect(klu.actions.stream(SUMMARIZE, { text: "token by token" })).rejects.toThrow(InvalidPromptResponseError);
    const answer = lastExchange().answer as { msg: string; stream_url: string; streaming_url?: string };
    expect(lastExchange()).toMatchObject({ status: 200, sent: { streaming: true, async_mode: false } });
    expect(answer.stream_url).toMatch(new RegExp(`^${emulator.url}/generations/[0-9a-f-]{36}/stream$`));
    expect(answer.streaming_url).toBeUndefined();

    // The client's server-side reader opens the stream without the bearer key the emulator requires...
    const tokens = _getStreamingData(answer.stream_url);
    await expect(tokens.next()).rejects.toThrow(StreamingError);
    const unauthenticated = await fetch(answer.stream_url);
    await unauthenticated.body?.cancel();
    expect(unauthenticated.status).toBe(401);
    // ...and ends on END_STREAM, where the emulator ends with [DONE].
    const stream = await fetch(answer.stream_url, { headers: { authorization: `Bearer ${API_KEY}` } });
    const events = (await stream.text()).trim().split("\n\n");
    expect(events.at(0)).toBe('data: {"token":"Summarize: "}');
    expect(events.at(-1)).toBe("data: [DONE]");
  });

  it("does not reach the emulator for the Action routes the spec does not show", async () => {
    await expect(klu.actions.get(SUMMARIZE)).rejects.toThrow(InstanceNotFoundError);
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/actions/${SUMMARIZE}`, status: 404 });
    await expect(klu.actions.getData(SUMMARIZE)).rejects.toThrow(WorkspaceOrUserNotFoundError);
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
    await expect(klu.sessions.get(created.guid)).rejects.toThrow(InstanceNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Session not found" } });
  });

  it("has no Session update (the client refuses it before sending anything)", async () => {
    const sessions = klu.sessions as unknown as { update(): Promise<never> };
    await expect(sessions.update()).rejects.toThrow(NotImplementedError);
    expect(exchanges).toEqual([]);
  });
});

describe("Feedback through the official client", () => {
  // Not on the Klu object in this release; made after KLU_ENV is set, as the client reads it on construction.
  let feedback: Feedback;
  beforeAll(() => {
    feedback = new Feedback(API_KEY);
  });

  it("rates a generation by its Data GUID (POST /feedback) and reads, updates and deletes the Feedback", async () => {
    const run = await klu.actions.prompt(CLASSIFY, { text: "refund please" });
    const dataGuid = run.feedbackUrl?.split("/").at(-1) ?? "";

    const created = await feedback.create({ dataGuid, type: "rating", value: "Positive", source: "sdk", metadata: { by: "qa" } });
    expect(created).toMatchObject({ dataGuid, type: "rating", value: 2, source: "sdk", metadata: { by: "qa" } });
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/feedback/", sent: { data: dataGuid, value: "Positive" } });

    expect(await feedback.get(created.guid)).toMatchObject({ guid: created.guid, dataGuid, value: 2 });

    const updated = await feedback.update(created.guid, { type: "rating", value: "Negative", source: "sdk" });
    expect(updated).toMatchObject({ guid: created.guid, value: 1, metadata: null });

    await feedback.delete(created.guid);
    await expect(feedback.get(created.guid)).rejects.toThrow(InstanceNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Feedback not found" } });
  });

  it("labels a generation through its feedback URL (POST /feedback/{data guid}) with the legacy meta_data", async () => {
    const run = await klu.actions.prompt(CLASSIFY, { text: "wrong invoice" });
    const dataGuid = run.feedbackUrl?.split("/").at(-1) ?? "";

    const created = await feedback.create(
      { type: "correction", value: "Billing", source: "agent", meta_data: { ticket: 9 } } as unknown as Parameters<
        typeof feedback.create
      >[0],
      dataGuid,
    );
    expect(created).toMatchObject({ dataGuid, type: "correction", value: "Billing", metadata: { ticket: 9 } });
    expect(lastExchange()).toMatchObject({ method: "POST", path: `/v1/feedback/${dataGuid}`, status: 200 });
  });

  it("reports a rating the spec does not take as a bad request", async () => {
    const run = await klu.actions.prompt(CLASSIFY, { text: "ok" });
    const dataGuid = run.feedbackUrl?.split("/").at(-1) ?? "";

    await expect(feedback.create({ dataGuid, type: "rating", value: "5", source: "sdk" })).rejects.toThrow(BadRequestAPIError);
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
    await expect(fineTunes.create()).rejects.toThrow(NotImplementedError);
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
    await expect(klu.fineTune.readStatus(guid)).rejects.toThrow(FineTuneNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404 });
  });

  it("disagrees on fine-tune processing: POST /finetune/process/ is an older path", async () => {
    const guid = await createFineTune("Processed elsewhere");

    await expect(klu.fineTune.process(guid, "gpt-4o-mini")).rejects.toThrow(FineTuneNotFoundError);
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/finetune/process/", status: 404, answer: { detail: "Not Found" } });
  });
});

describe("Models through the official client", () => {
  it("reads, renames and deletes a Model", async () => {
    const created = await direct("POST", "/models", { llm: "gpt-4o", provider: "openai", key: "sk-test-model" });
    const guid: string = created.body.guid;

    expect(await klu.models.get(guid)).toMatchObject({ guid, llm: "gpt-4o", provider_name: "openai", default: false });
    expect(await klu.models.update(guid, { llm: "gpt-4.1" })).toMatchObject({ guid, llm: "gpt-4.1" });
    expect(lastExchange()).toMatchObject({ method: "PUT", path: `/v1/models/${guid}`, sent: { llm: "gpt-4.1" } });

    await klu.models.delete(guid);
    await expect(klu.models.get(guid)).rejects.toThrow(InstanceNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Model not found" } });
  });

  it("disagrees on Model create: the client sends workspaceModelProviderId where the spec needs provider and key", async () => {
    await expect(klu.models.create({ llm: "gpt-4o", workspaceModelProviderId: 1 })).rejects.toThrow(BadRequestAPIError);
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/models/", status: 400 });
    const missing = (lastExchange().answer as { detail: { loc: string[] }[] }).detail.map((issue) => issue.loc.at(-1));
    expect(missing).toEqual(expect.arrayContaining(["provider", "key"]));
  });

  it("disagrees on provider key validation: POST /models/validate is not a spec route", async () => {
    await expect(klu.models.validateProviderApiKey("sk-test-validate", 1)).rejects.toThrow(UnknownModelProviderError);
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/models/validate", status: 404 });
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
    await expect(create).rejects.toThrow(BadRequestAPIError);
    expect(lastExchange()).toMatchObject({ method: "POST", path: "/v1/experiments/", status: 400 });
    expect(lastExchange().sent).toEqual({ name: "Tone", app_guid: APP, action_primary_guid: SUMMARIZE, action_secondary_guid: CLASSIFY });
  });

  it("reads, renames, prompts and deletes an Experiment", async () => {
    const guid = await createExperiment("Summaries vs labels");

    const read = await klu.experiments.get(guid);
    expect(read).toMatchObject({ guid, name: "Summaries vs labels", status: "active" });
    expect(lastExchange().answer).toMatchObject({ app: APP, primary_action: SUMMARIZE, secondary_action: CLASSIFY });
    expect(read.appGuid).toBeUndefined();

    expect(await klu.experiments.update(guid, { name: "A/B" })).toMatchObject({ guid, name: "A/B" });

    const first = await klu.experiments.prompt(guid, { text: "hello" });
    expect(first).toMatchObject({ msg: "Summarize: hello", variant: "primary", action: SUMMARIZE });
    const second = await klu.experiments.prompt(guid, { text: "hello" });
    expect(second).toMatchObject({ msg: "Classify: hello", variant: "secondary", action: CLASSIFY });

    await klu.experiments.delete(guid);
    await expect(klu.experiments.prompt(guid, { text: "gone" })).rejects.toThrow(ExperimentNotFoundError);
    expect(lastExchange()).toMatchObject({ status: 404, answer: { detail: "Experiment not found" } });
  });

  it("disagrees on forcing an Action: the client sends force_action, the emulator reads action", async () => {
    const guid = await createExperiment("Forced");

    const result = await klu.experiments.prompt(guid, { text: "pick secondary" }, { forceAction: CLASSIFY });
    expect(lastExchange().sent).toMatchObject({ force_action: CLASSIFY });
    // Not forced: the first unforced prompt goes to the primary Action.
    expect(result).toMatchObject({ variant: "primary", action: SUMMARIZE });
  });
});

describe("Workspaces and Contexts through the official client: older paths", () => {
  it("disagrees on every Workspace route: the client calls /workspace/, the spec serves /workspaces/", async () => {
    const current = await direct("GET", "/workspaces/current");
    const workspace: string = current.body.guid;
    expect(current.body).toMatchObject({ name: "Acme", slug: "acme" });

    await expect(klu.workspaces.get(workspace)).rejects.toThrow(InstanceNotFoundError);
    expect(lastExchange()).toMatchObject({
      method: "GET",
      path: `/v1/workspace/${workspace}`,
      status: 404,
      answer: { detail: "Not Found" },
    });
    await expect(klu.workspaces.getApps(workspace)).rejects.toThrow(WorkspaceOrUserNotFoundError);
    expect(lastExchange()).toMatchObject({ path: `/v1/workspace/${workspace}/apps`, status: 404 });
    await expect(klu.workspaces.getContexts(workspace)).rejects.toThrow(WorkspaceOrUserNotFoundError);
    expect(lastExchange()).toMatchObject({ path: `/v1/workspace/${workspace}/context`, status: 404 });
    await expect(klu.workspaces.getModels(workspace)).rejects.toThrow(WorkspaceOrUserNotFoundError);
    expect(lastExchange()).toMatchObject({ path: `/v1/workspace/${workspace}/models`, status: 404 });
    await expect(klu.workspaces.paginator.fetchAll()).rejects.toMatchObject({ response: { status: 404 } });
    expect(lastExchange()).toMatchObject({ path: "/v1/workspace/?skip=0&limit=50", status: 404 });

    // The spec's route for the same question answers.
    expect((await direct("GET", `/workspaces/${workspace}/apps`)).body).toContainEqual(
      expect.objectContaining({ guid: APP, name: "Support" }),
    );
  });

  it("disagrees on Context Documents: the client calls /context/{guid}/documents, the spec /contexts/{guid}/documents", async () => {
    await expect(klu.contexts.addDoc(HANDBOOK, { text: "Refunds take 5 days." })).rejects.toThrow(ContextNotFoundError);
    expect(lastExchange()).toMatchObject({ method: "POST", path: `/v1/context/${HANDBOOK}/documents`, status: 404 });
    await expect(klu.contexts.listDocs(HANDBOOK)).rejects.toThrow(ContextNotFoundError);
    expect(lastExchange()).toMatchObject({ method: "GET", path: `/v1/context/${HANDBOOK}/documents`, status: 404 });

    expect((await direct("GET", `/contexts/${HANDBOOK}/documents`)).status).toBe(200);
  });
});
