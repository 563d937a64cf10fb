/**
 * Changing a resource's `connection`, through the dynamic-provider host: another service (base URL) is
 * another object, so the diff replaces it (created there, deleted here with the old connection); a new API
 * key is a rotation, in place, as long as it selects the same workspace, and refused when it does not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderHost } from "../../src/testing/host";
import { ACME_KEY, OTHER_KEY } from "../emulator/harness";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const ROTATED_KEY = "gms_test_acme_rotated_key";

describe("a changed connection, through the dynamic-provider host", () => {
  let bed: Testbed;
  let app: Registration;

  beforeAll(async () => {
    bed = await startTestbed();
    bed.emulator.store.workspaces.addKey(ACME_KEY, ROTATED_KEY);
    app = bed.capture(`new gms.App("support", { name: "Support bot" });`)[0]!;
  });
  afterAll(() => bed?.close());

  const checked = async (connection: Record<string, string>) => {
    const result = await bed.host.check(urnOf(app), {}, { ...app.inputs, connection });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("replaces the object when the base URL changes, and only updates it when the key alone does", async () => {
    const inputs = await checked({ baseUrl: bed.emulator.url, apiKey: ACME_KEY });
    const created = await bed.host.create(urnOf(app), inputs);

    const moved = await bed.host.diff(
      urnOf(app),
      created.id,
      created.properties,
      await checked({ baseUrl: "https://gms.example.com/v1", apiKey: ACME_KEY }),
    );
    expect(moved).toEqual({ changes: "some", replaces: ["connection"], deleteBeforeReplace: false });
    // The same service written with a trailing slash is not a move.
    const same = await bed.host.diff(
      urnOf(app),
      created.id,
      created.properties,
      await checked({ baseUrl: `${bed.emulator.url}/`, apiKey: ACME_KEY }),
    );
    expect(same.replaces).toEqual([]);

    const rotated = await checked({ baseUrl: bed.emulator.url, apiKey: ROTATED_KEY });
    expect(await bed.host.diff(urnOf(app), created.id, created.properties, rotated)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const updated = await bed.counting(() => bed.host.update(urnOf(app), created.id, created.properties, rotated));
    // Both keys select the same workspace: nothing is asked of the App itself.
    expect(updated.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "GET /v1/workspaces/current",
      "GET /v1/workspaces/current",
    ]);
    expect(updated.result.properties.connection).toEqual({ baseUrl: bed.emulator.url, apiKey: ROTATED_KEY });

    const elsewhere = await checked({ baseUrl: bed.emulator.url, apiKey: OTHER_KEY });
    await expect(bed.host.update(urnOf(app), created.id, updated.result.properties, elsewhere)).rejects.toThrow(
      `App ${created.id} lives in another workspace than the one the new connection's API key selects; an object cannot move between workspaces in place.`,
    );
    expect((await bed.api("GET", `/apps/${created.id}`)).status).toBe(200);
  });

  it("refuses a service URL without /v1 before any request, from connection.baseUrl and from gms:baseUrl alike", async () => {
    const refused = await bed.host.check(
      urnOf(app),
      {},
      { ...app.inputs, connection: { baseUrl: "http://127.0.0.1:4000", apiKey: ACME_KEY } },
    );
    expect(refused.failures).toEqual([
      { property: "connection.baseUrl", reason: "must be an http(s) URL ending in /v1, for example https://gms.example.com/v1" },
    ]);

    const host = await ProviderHost.start({ cwd: bed.dir, project: "gms-test", stack: "dev" });
    try {
      const root = bed.emulator.url.replace(/\/v1$/, "");
      await host.configure({ "gms:baseUrl": root, "gms:apiKey": ACME_KEY });
      const inputs = (await host.check(urnOf(app), {}, app.inputs)).inputs;
      const attempt = await bed.counting(() => host.create(urnOf(app), inputs).catch((error: unknown) => error as Error));
      expect((attempt.result as Error).message).toBe(
        // Not shown: a stack's config value may be a secret.
        "gms:baseUrl must be an http(s) URL ending in /v1, for example https://gms.example.com/v1",
      );
      expect(attempt.requests).toEqual([]);
    } finally {
      await host.close();
    }
  });
});
