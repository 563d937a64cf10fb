/**
 * The core both forms run (`kindProvider`, src/provider/provider.ts) and its dynamic-provider adapter
 * (`resourceProvider`): a create that may have made its object (a `MayExistError` from the client or the kind) returns
 * what it made as a value, which the adapter throws as the host's partial-create error; a diff carries its detailed diff, which the adapter leaves out.
 */
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { MayExistError } from "../../src/client";
import { fieldNames } from "../../src/provider/field-names";
import { kindProvider, resourceProvider } from "../../src/provider/provider";
import { Session } from "../../src/provider/session";
import { INCOMPLETE, UNRESOLVED_CREATE } from "../../src/provider/unsettled";
import { appKind } from "../../src/resources/app";
import { contextSourceKind } from "../../src/resources/context-source";
import { modelKind } from "../../src/resources/model";
import { API_KEY, json, type ScriptedServer, type Step, startScriptedServer } from "../client/scripted-server";

/** The answer's status line arrives and its body is cut: the POST's outcome is unknown. */
const cutAnswer: Step = (_request, response) => {
  response.writeHead(200, {
    "content-type": "application/json",
    "content-length": "1024",
  });
  response.write("{", () => response.socket?.destroy());
};
const failing = json(500, { detail: "upstream broke" });

describe("the provider core", () => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(() => Promise.all(opened.splice(0).map((each) => each.close())));

  /** A session that sends each request once, against a service answering `steps`. */
  const against = async (steps: Step[]) => {
    const server: ScriptedServer = await startScriptedServer(steps);
    const session = new Session();
    opened.push(server, session);
    session.configure({ maxRetries: "0", requestDeadlineMs: "0" });
    return {
      session,
      connection: { baseUrl: server.baseUrl, apiKey: API_KEY },
    };
  };

  it("returns a create it could not settle as a partial result, which the dynamic adapter throws for the host", async () => {
    const { session, connection } = await against([cutAnswer, failing]);
    const inputs = {
      name: "Support",
      description: null,
      connection,
      __provider: "serialized",
    };
    const outcome = await kindProvider(appKind, session, fieldNames(appKind)).create(inputs, new Set());
    expect(outcome.partial?.id).toMatch(/^unresolved-/);
    expect(outcome.partial?.properties).toHaveProperty(UNRESOLVED_CREATE);
    expect(outcome.partial?.properties).not.toHaveProperty("__provider");
    expect(outcome.partial?.message).not.toContain(API_KEY);

    const again = await against([cutAnswer, failing]);
    const thrown = (await resourceProvider(appKind, again.session)
      .create({ ...inputs, connection: again.connection })
      .catch((error: unknown) => error)) as Error & {
      id: string;
      properties: Record<string, unknown>;
      reasons: string[];
    };
    expect(thrown.id).toMatch(/^unresolved-/);
    expect(thrown.properties.__provider).toBe("serialized");
    expect(thrown.reasons).toEqual([thrown.message]);
  });

  it("records the object a lost create made as made when reading it back fails: it exists, so state keeps its GUID", async () => {
    const guid = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
    const now = new Date().toISOString();
    const app = {
      guid,
      name: "Support",
      description: null,
      slug: "support",
      created_at: now,
      updated_at: now,
      created_by_id: "u",
      last_updated_by_id: null,
    };
    const found = json(200, {
      data: [app],
      total_count: 1,
      has_next_page: false,
    });
    const inputs = (connection: unknown) => ({
      name: "Support",
      description: null,
      connection,
      __provider: "serialized",
    });
    const { session, connection } = await against([cutAnswer, found, failing]);
    const outcome = await kindProvider(appKind, session, fieldNames(appKind)).create(inputs(connection), new Set());
    expect(outcome.partial?.id).toBe(guid);
    expect(outcome.partial?.properties).toEqual({
      name: "Support",
      description: null,
      connection,
      [INCOMPLETE]: true,
    });
    expect(outcome.partial?.message).toMatch(
      /^Cannot create App "Support": .*the object it made \(6f1d8a52-.*\) was found, but reading it failed/,
    );

    // The adapter throws it as the engine's init failure, whose properties (the API key among them) only the host reads.
    const again = await against([cutAnswer, found, failing]);
    const thrown = await resourceProvider(appKind, again.session)
      .create(inputs(again.connection))
      .catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(MayExistError);
    const { made, id, properties, reasons, message, code } = thrown as MayExistError;
    expect(made).toEqual({ state: "made", id: guid, outputs: properties });
    expect([id, code, reasons]).toEqual([guid, "created_but_failed", [message]]);
    expect(properties).toMatchObject({
      [INCOMPLETE]: true,
      __provider: "serialized",
      connection: again.connection,
    });
    expect(`${inspect(thrown)}${JSON.stringify(thrown)}${Object.values(thrown as object).join()}`).not.toContain(API_KEY);
  });

  it("blanks the values of the inputs it is told are secret from its errors, and only those", async () => {
    const refusal = json(400, {
      detail: "description hunter2-token is not allowed",
    });
    const inputs = (connection: unknown) => ({
      name: "Support",
      description: "hunter2-token",
      connection,
    });
    const told = await against([refusal]);
    const blanked = await kindProvider(appKind, told.session, fieldNames(appKind))
      .create(inputs(told.connection), new Set(["description"]))
      .catch((error: unknown) => error as Error);
    expect((blanked as Error).message).toContain("[secret]");
    expect((blanked as Error).message).not.toContain("hunter2-token");
    const untold = await against([refusal]);
    const shown = await kindProvider(appKind, untold.session, fieldNames(appKind))
      .create(inputs(untold.connection), new Set())
      .catch((error: unknown) => error as Error);
    expect((shown as Error).message).toContain("hunter2-token");
  });

  it("takes the names a kind's fields mark, read once: secret inputs, what the engine always holds secret, write-only", () => {
    expect(fieldNames(modelKind)).toEqual({
      secretInputs: ["key"],
      alwaysSecret: ["key", "connection"],
      writeOnly: ["key", "url"],
    });
    expect(fieldNames(contextSourceKind)).toEqual({
      secretInputs: [],
      alwaysSecret: ["connection", "sourceUrl"],
      writeOnly: ["file", "process", "waitForIndexing"],
    });
    expect(fieldNames(modelKind)).toBe(fieldNames(modelKind));
  });

  it("decides a diff with each property's change, which the dynamic adapter leaves out", async () => {
    const session = new Session();
    const connection = {
      baseUrl: "https://gms.example.com/v1",
      apiKey: API_KEY,
    };
    const olds = {
      guid: "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f",
      name: "Support",
      connection,
    };
    const news = { name: "Helpdesk", description: "Tickets", connection };
    const core = kindProvider(appKind, session, fieldNames(appKind));
    expect(await core.diff(olds.guid, olds, news)).toEqual({
      changes: true,
      replaces: [],
      detailedDiff: {
        name: { change: "update", replace: false, inputDiff: true },
        description: { change: "add", replace: false, inputDiff: true },
      },
    });
    expect(await resourceProvider(appKind, session).diff(olds.guid, olds, news)).toEqual({ changes: true, replaces: [] });
    // A partial create's record is replaced, deleted first, though no input explains it.
    expect(await core.diff(olds.guid, { ...olds, [INCOMPLETE]: true }, { ...news, name: "Support" })).toEqual({
      changes: true,
      replaces: [INCOMPLETE],
      deleteBeforeReplace: true,
      detailedDiff: {
        description: { change: "add", replace: false, inputDiff: true },
        [INCOMPLETE]: { change: "update", replace: true, inputDiff: false },
      },
    });
    await session.close();
  });
});
