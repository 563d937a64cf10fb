import { describe, expect, it } from "vitest";
import { call } from "../../src/api/endpoint";
import { modelEndpoints } from "../../src/api/models";
import { type GmsClient, MayExistError } from "../../src/client";
import { abandonCreate } from "../../src/provider/undo-create";
import { json, scriptedClients, type Step } from "../client/scripted-server";

const GUID = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
const { connect } = scriptedClients();
/** The rollback of a Model create: its delete is the Model's DELETE entry. */
const abandoned = (client: GmsClient) => ({
  remove: async () => void (await call(client, modelEndpoints.delete, { params: { guid: GUID } })),
  kindLabel: "Model",
  guid: GUID,
  message: "Cannot create Model: reading it back failed.",
  record: { guid: GUID, llm: "gpt-4o" },
});

describe("abandonCreate (rolling back a create that failed midway)", () => {
  it.each<[string, Step]>([
    ["deleted", json(200, { message: `Model ${GUID} deleted` })],
    ["already gone", json(404, { detail: "Model not found" })],
  ])("throws a plain error saying the object is gone when it is %s", async (_case, answer) => {
    const { server, client } = await connect(answer, { maxRetries: 0 });
    const error = await abandonCreate(abandoned(client)).catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(MayExistError);
    expect((error as Error).message).toBe(
      `Cannot create Model: reading it back failed. The Model it had created (${GUID}) was deleted again.`,
    );
    expect(server.requests.map((request) => `${request.method} ${request.url}`)).toEqual([`DELETE /v1/models/${GUID}`]);
  });

  it("reports the object as created with errors when it cannot be deleted, so state records it", async () => {
    const { client } = await connect(json(400, { detail: "refused" }), { maxRetries: 0 });
    const error = await abandonCreate(abandoned(client)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MayExistError);
    expect((error as MayExistError).made).toEqual({ state: "made", id: GUID, outputs: { guid: GUID, llm: "gpt-4o" } });
    expect((error as Error).message).toBe(
      `Cannot create Model: reading it back failed. Deleting the Model it had created (${GUID}) failed too (the service answered 400 ` +
        `refused): Pulumi records it as created with errors, so the next \`pulumi up\` replaces it and \`pulumi destroy\` deletes it.`,
    );
  });
});
