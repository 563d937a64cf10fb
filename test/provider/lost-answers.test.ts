/**
 * Creates over a network that loses answers, through the real dynamic-provider host: a lost answer is
 * looked up and adopted (never replayed into a duplicate), an object that exists but could not be finished
 * reaches the engine as partially created (ErrorResourceInitFailed with id and properties), and a create
 * whose outcome cannot be settled is recorded as a placeholder that refresh adopts and up replaces.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ReceivedRequest,
  type ScriptedServer,
  type Step,
  destroyAfterReceiving,
  json,
  startScriptedServer,
} from "../client/scripted-server";
import { partialOf, type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const GUID = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
const OTHER_GUID = "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d";
const KEY = "sk-lost-answers-5e2a91";
const now = () => new Date().toISOString();
const audit = () => ({ created_at: now(), updated_at: now(), created_by_id: "user-1", last_updated_by_id: null });
/** `retry-after: 0` keeps the client's retries quick. */
const failing = json(500, { detail: "upstream broke" }, { "retry-after": "0" });
const times = (count: number, step: Step) => Array<Step>(count).fill(step);
const sent = (requests: ReceivedRequest[]) => requests.map((request) => `${request.method} ${request.url.split("?")[0]}`);
/**
 * The answer's status line arrives and its body is cut: the service is done with the POST, whatever it did,
 * so the client looks once (a connection cut before any answer makes it look until the service's request
 * deadline has passed, see src/client/create.ts).
 */
const cutAnswer: Step = (_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": "1024" });
  response.write("{", () => response.socket?.destroy());
};

describe("creates whose answers are lost, through the dynamic-provider host", () => {
  let bed: Testbed;
  let app: Registration;
  let connection: Registration;
  let model: Registration;
  const servers: ScriptedServer[] = [];

  beforeAll(async () => {
    bed = await startTestbed();
    const registered = bed.capture(`
      new gms.App("support", { name: "Support bot" });
      new gms.ProviderConnection("openai", { provider: "openai", key: "${KEY}", nickname: "Primary" });
      new gms.Model("gpt", { llm: "gpt-4o", provider: "openai", key: "${KEY}" });
    `);
    // Registrations arrive as their inputs resolve, not in program order.
    [app, connection, model] = ["support", "openai", "gpt"].map((name) => registered.find((r) => r.name === name)!) as [
      Registration,
      Registration,
      Registration,
    ];
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await bed?.close();
  });

  /** The registration's checked inputs, with its calls sent to a scripted service. */
  const against = async (registration: Registration, steps: Step[]) => {
    const service = await startScriptedServer(steps);
    servers.push(service);
    const connected = { ...registration.inputs, connection: { baseUrl: service.baseUrl, apiKey: "gms_scripted_key" } };
    const checked = await bed.host.check(urnOf(registration), {}, connected);
    expect(checked.failures).toEqual([]);
    return { service, inputs: checked.inputs };
  };

  it("adopts the App a POST created when its answer was lost, with no second POST", async () => {
    const created = { guid: GUID, name: "Support bot", description: null, slug: "support-bot", ...audit() };
    const { service, inputs } = await against(app, [
      destroyAfterReceiving,
      json(200, { data: [created], total_count: 1, has_next_page: false }),
      json(200, created),
    ]);
    const result = await bed.host.create(urnOf(app), inputs);
    expect(result.id).toBe(GUID);
    expect(result.properties).toMatchObject({ guid: GUID, name: "Support bot", slug: "support-bot" });
    expect(sent(service.requests)).toEqual(["POST /v1/apps", "GET /v1/apps", `GET /v1/apps/${GUID}`]);
  });

  it("sends the POST again only when the lookup shows nothing was created (a 503)", async () => {
    const created = { guid: GUID, name: "Support bot", description: null, slug: "support-bot", ...audit() };
    const { service, inputs } = await against(app, [
      json(503, { detail: "busy" }),
      json(200, { data: [], total_count: 0, has_next_page: false }),
      json(200, created),
    ]);
    expect((await bed.host.create(urnOf(app), inputs)).id).toBe(GUID);
    expect(sent(service.requests)).toEqual(["POST /v1/apps", "GET /v1/apps", "POST /v1/apps"]);
  });

  it("never adopts a connection of another provider type made meanwhile for the one a lost POST may have made", async () => {
    // An unnamed connection starts with its provider type as its nickname: this one is anthropic, not openai.
    const anthropic = { guid: OTHER_GUID, name: null, nickname: "anthropic", url: null, default: false, ...audit() };
    const made = { guid: GUID, name: null, nickname: "openai", url: null, default: false, ...audit() };
    const { service, inputs } = await against(connection, [
      cutAnswer,
      json(200, [anthropic]),
      json(200, made),
      json(200, { ...made, nickname: "Primary" }),
    ]);
    expect((await bed.host.create(urnOf(connection), inputs)).id).toBe(GUID);
    expect(sent(service.requests)).toEqual(["POST /v1/providers", "GET /v1/providers", "POST /v1/providers", `PUT /v1/providers/${GUID}`]);
  });

  it("hands a connection it made but could not finish nor delete to the engine as partially created", async () => {
    const made = { guid: GUID, name: null, nickname: "openai", url: null, default: false, ...audit() };
    const { inputs } = await against(connection, [json(200, made), ...times(4, failing), ...times(4, failing)]);
    const error = await bed.host.create(urnOf(connection), inputs).catch((caught: unknown) => caught);
    const { id, properties, reasons, message } = partialOf(error);
    expect(id).toBe(GUID);
    // Marked incomplete: a lost answer may even have deleted it, so the next run replaces it.
    expect(properties).toMatchObject({ guid: GUID, provider: "openai", default: false, __incomplete: true });
    // The host does not add `__provider` to a partial create's properties; without it no later operation could load the provider.
    expect(properties.__provider).toBe(inputs.__provider);
    expect(message).toMatch(
      /setting its nickname failed: .*Deleting the ProviderConnection it had created .* failed too .*next `pulumi up` replaces it/,
    );
    expect(reasons).toEqual([message]);
    expect(JSON.stringify({ message, reasons })).not.toContain(KEY);

    const next = await bed.host.diff(urnOf(connection), id, properties, inputs);
    expect(next).toEqual({ changes: "some", replaces: ["__incomplete"], deleteBeforeReplace: true });
  });

  it("records a create it cannot settle as a placeholder that refresh adopts and up replaces", async () => {
    // The POST's answer is lost and every lookup fails: whether the Model exists is unknown.
    const { service, inputs } = await against(model, [cutAnswer, ...times(4, failing)]);
    const error = await bed.host.create(urnOf(model), inputs).catch((caught: unknown) => caught);
    const { id, properties, message } = partialOf(error);
    expect(id).toMatch(/^unresolved-/);
    expect(message).toMatch(
      /it may exist.*Pulumi records it as possibly created between .* and .*: `pulumi refresh` adopts the object if it is there/s,
    );
    expect(message).not.toContain(KEY);
    expect(sent(service.requests)).toEqual(["POST /v1/models", ...times(4, "GET /v1/models" as never)]);
    const window = properties.__unresolvedCreate as { since: string; until: string };
    expect(Date.parse(window.since)).toBeLessThan(Date.parse(window.until));
    expect(properties.__provider).toBe(inputs.__provider);

    // `up` replaces the placeholder.
    expect(await bed.host.diff(urnOf(model), id, properties, inputs)).toEqual({
      changes: "some",
      replaces: ["__unresolvedCreate"],
      deleteBeforeReplace: true,
    });

    // What the lost create made: created inside the window, matching the declared fields.
    const inWindow = new Date((Date.parse(window.since) + Date.parse(window.until)) / 2).toISOString();
    const live = {
      guid: GUID,
      llm: "gpt-4o",
      provider_name: "openai",
      provider_guid: null,
      default: false,
      deleted: false,
      created_at: inWindow,
      updated_at: inWindow,
    };
    const older = { ...live, guid: "0a9b8c7d-6e5f-4a3b-9c2d-1e0f2a3b4c5d", created_at: "2020-01-01T00:00:00.000Z" };
    const lookup = json(200, [older, live]);

    const refreshed = await against(model, [lookup, json(200, live)]);
    const read = await bed.host.read(urnOf(model), id, { ...properties, connection: refreshed.inputs.connection });
    expect(read.id).toBe(GUID);
    expect(read.properties).toMatchObject({ guid: GUID, llm: "gpt-4o" });
    expect(read.properties).not.toHaveProperty("__unresolvedCreate");

    const deleting = await against(model, [lookup, json(200, { message: `Model ${GUID} deleted` })]);
    await bed.host.delete(urnOf(model), id, { ...properties, connection: deleting.inputs.connection });
    expect(sent(deleting.service.requests)).toEqual(["GET /v1/models", `DELETE /v1/models/${GUID}`]);

    const nothing = await against(model, [json(200, [older])]);
    expect((await bed.host.read(urnOf(model), id, { ...properties, connection: nothing.inputs.connection })).id).toBe("");
  });

  /** A placeholder for a Model create that could not be settled, and two identical Models made in its window. */
  const placeholderAmongTwins = async () => {
    const { inputs } = await against(model, [cutAnswer, ...times(4, failing)]);
    const { id, properties } = partialOf(await bed.host.create(urnOf(model), inputs).catch((caught: unknown) => caught));
    const window = properties.__unresolvedCreate as { since: string; until: string };
    const inWindow = new Date((Date.parse(window.since) + Date.parse(window.until)) / 2).toISOString();
    const made = { llm: "gpt-4o", provider_name: "openai", provider_guid: null, default: false, deleted: false };
    const lost = { ...made, guid: GUID, created_at: inWindow, updated_at: inWindow };
    // An identical Model another resource of the stack holds.
    const twin = { ...lost, guid: "7e6d5c4b-3a29-4180-9f7e-6d5c4b3a2918" };
    return { inputs, id, properties, lost, twin };
  };
  const deleted = json(200, { message: "deleted" });

  it("never takes the object of another resource it has seen for the one a placeholder's lost create made", async () => {
    const { inputs, id, properties, lost, twin } = await placeholderAmongTwins();
    const service = await startScriptedServer([json(200, [twin, lost]), deleted]);
    servers.push(service);
    const connection = { baseUrl: service.baseUrl, apiKey: "gms_scripted_key" };
    // `up` diffs that resource (no request) before it resolves the placeholder, in the same provider host.
    const twinState = { ...inputs, connection, guid: twin.guid };
    expect((await bed.host.diff(urnOf(model), twin.guid, twinState, { ...inputs, connection })).changes).toBe("none");
    await bed.host.delete(urnOf(model), id, { ...properties, connection });
    expect(sent(service.requests)).toEqual(["GET /v1/models", `DELETE /v1/models/${GUID}`]);
  });

  it("never takes the object of a resource being destroyed with it for the placeholder's", async () => {
    const { inputs, id, properties, lost, twin } = await placeholderAmongTwins();
    // The list is taken while the other resource's DELETE is under way: it still shows that object.
    const service = await startScriptedServer([deleted, json(200, [twin, lost]), deleted]);
    servers.push(service);
    const connection = { baseUrl: service.baseUrl, apiKey: "gms_scripted_key" };
    await bed.host.delete(urnOf(model), twin.guid, { ...inputs, connection, guid: twin.guid });
    await bed.host.delete(urnOf(model), id, { ...properties, connection });
    expect(sent(service.requests)).toEqual([`DELETE /v1/models/${twin.guid}`, "GET /v1/models", `DELETE /v1/models/${GUID}`]);
  });
});
