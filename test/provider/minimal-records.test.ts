/**
 * Records as a service that answers only what the spec names would send them: no App on a Workflow or an
 * Experiment, and no timestamp, creator or provider fields where the spec leaves their names out (the
 * emulator answers them). Refresh must still work: what the record lacks is kept from state.
 */
import { afterEach, describe, expect, it } from "vitest";
import { resourceProvider } from "../../src/provider/provider";
import { Session } from "../../src/provider/session";
import { experimentKind } from "../../src/resources/experiment";
import { modelKind } from "../../src/resources/model";
import { skillKind } from "../../src/resources/skill";
import { workflowKind } from "../../src/resources/workflow";
import { API_KEY, type ScriptedServer, startScriptedServer } from "../client/scripted-server";

const GUID = "6f1c2b1e-8a8e-4f57-9d51-1b2c3d4e5f60";
const APP = "0b7d6c5e-4f3a-4b2c-8d1e-9f8a7b6c5d4e";
const ACTION_A = "1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d";
const ACTION_B = "2b3c4d5e-6f7a-4b2c-9d3e-4f5a6b7c8d9e";
const AUDIT = {
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-02T00:00:00.000Z",
  created_by_id: "u1",
  last_updated_by_id: null,
};

describe("records with only the spec's fields", () => {
  let server: ScriptedServer | undefined;
  afterEach(() => server?.close());

  const serve = async (body: object) => {
    server = await startScriptedServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
    return { baseUrl: server.baseUrl, apiKey: API_KEY };
  };

  it("keeps a Workflow's App from state when the service does not return it", async () => {
    const connection = await serve({ guid: GUID, name: "Renamed", slug: "triage" });
    const read = await resourceProvider(workflowKind, new Session()).read(GUID, { guid: GUID, name: "Triage", app: APP, connection });
    expect(read.props).toMatchObject({ guid: GUID, name: "Renamed", app: APP, slug: "triage" });
    expect(read.inputs).toMatchObject({ name: "Renamed", app: APP });
  });

  it("keeps an Experiment's App from state when the service does not return it", async () => {
    const connection = await serve({
      guid: GUID,
      name: "AB",
      primary_action: ACTION_B,
      secondary_action: ACTION_A,
      status: "active",
      deleted: false,
      ...AUDIT,
    });
    const read = await resourceProvider(experimentKind, new Session()).read(GUID, {
      guid: GUID,
      name: "AB",
      app: APP,
      primaryAction: ACTION_A,
      secondaryAction: ACTION_B,
      connection,
    });
    expect(read.props).toMatchObject({ app: APP, primaryAction: ACTION_B, secondaryAction: ACTION_A });
  });

  it("reads a Model without provider or audit fields, keeping the provider from state", async () => {
    const connection = await serve({ guid: GUID, llm: "gpt-4.1", default: false, deleted: false });
    const read = await resourceProvider(modelKind, new Session()).read(GUID, {
      guid: GUID,
      llm: "gpt-4o",
      provider: "openai",
      key: "sk-state-only",
      connection,
    });
    expect(read.props).toMatchObject({ guid: GUID, llm: "gpt-4.1", provider: "openai", key: "sk-state-only", default: false });
    expect(read.props).not.toHaveProperty("createdAt");
  });

  it("reads a Skill without audit fields", async () => {
    const connection = await serve({ guid: GUID, name: "web-search", type: "web", metadata: null });
    const read = await resourceProvider(skillKind, new Session()).read(GUID, { guid: GUID, name: "web-search", type: "web", connection });
    expect(read.props).toMatchObject({ guid: GUID, name: "web-search", type: "web" });
  });
});
