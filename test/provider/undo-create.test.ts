import { describe, expect, it } from "vitest";
import { path } from "../../src/client";
import { undoCreate } from "../../src/provider/undo-create";
import { json, scriptedClients, type Step } from "../client/scripted-server";

const GUID = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
const { connect } = scriptedClients();

describe("undoCreate (rolling back a create that failed midway)", () => {
  it.each<[string, Step, string]>([
    ["deleted", json(200, { message: `Model ${GUID} deleted` }), `The Model it had created (${GUID}) was deleted again.`],
    ["already gone", json(404, { detail: "Model not found" }), `The Model it had created (${GUID}) is already gone.`],
    [
      "not deletable",
      json(400, { detail: "refused" }),
      `Deleting the Model it had created (${GUID}) failed too (the service answered 400 refused): delete it by hand, Pulumi does not manage it.`,
    ],
  ])("says what became of the object when it is %s", async (_case, answer, sentence) => {
    const { server, client } = await connect(answer, { maxRetries: 0 });
    await expect(undoCreate(client, path`/models/${GUID}`, "Model", GUID)).resolves.toBe(sentence);
    expect(server.requests.map((request) => `${request.method} ${request.url}`)).toEqual([`DELETE /v1/models/${GUID}`]);
  });
});
