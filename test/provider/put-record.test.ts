import { describe, expect, it } from "vitest";
import { Workflow } from "../../src/api/workflows";
import { NotFoundError, path } from "../../src/client";
import { putRecord } from "../../src/api/put-record";
import { json, scriptedClients, type ScriptedServer, type Step } from "../client/scripted-server";

const GUID = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
const WORKFLOW = {
  guid: GUID,
  name: "Triage",
  slug: "triage",
  app: "0b9c2f6e-1d2a-4c3b-8e4f-5a6b7c8d9e0f",
  created_at: "2024-01-01T00:00:00Z",
  updated_at: "2024-01-02T00:00:00Z",
  created_by_id: "user-1",
  last_updated_by_id: "user-1",
};

const { connect } = scriptedClients();
const setup = (steps: Step[]) => connect(steps, { maxRetries: 0 });

const sent = (scripted: ScriptedServer) => scripted.requests.map((request) => `${request.method} ${request.url} ${request.body}`);

describe("putRecord (a PUT whose response the spec does not show)", () => {
  it("returns the answer when it is the record, with no second request", async () => {
    const { server, client } = await setup([json(200, WORKFLOW)]);
    await expect(putRecord(client, path`/workflows/${GUID}`, { name: "Triage" }, Workflow)).resolves.toEqual(WORKFLOW);
    expect(sent(server)).toEqual([`PUT /v1/workflows/${GUID} {"name":"Triage"}`]);
  });

  const noBody: Step = (_request, response) => response.writeHead(204).end();
  it.each([
    ["another body", json(200, { message: "updated" })],
    ["no body", noBody],
  ])("reads the record back from the same path when the answer is %s", async (_case, answer) => {
    const { server, client } = await setup([answer, json(200, WORKFLOW)]);
    await expect(putRecord(client, path`/workflows/${GUID}`, { name: "Triage" }, Workflow)).resolves.toEqual(WORKFLOW);
    expect(sent(server)).toEqual([`PUT /v1/workflows/${GUID} {"name":"Triage"}`, `GET /v1/workflows/${GUID} `]);
  });

  it("lets a failed PUT through as the client's error, without reading", async () => {
    const { server, client } = await setup([json(404, { detail: "Workflow not found" })]);
    await expect(putRecord(client, path`/workflows/${GUID}`, { name: "Triage" }, Workflow)).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(1);
  });
});
