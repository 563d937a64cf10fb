/**
 * The fuzzing run's seeding (scripts/fuzz/seed.mts): every collection a route of the emulator's OpenAPI document
 * names gets seeded GUIDs, the emulator accepts every seeding request, and Schemathesis's configuration binds each
 * path parameter and each body field that names an object to them, DELETE routes only to the doomed ones.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { fuzzFixtures, type OpenApiDocument, type Seeded, pathCollections, seedObjects, seededConfig } from "../../scripts/fuzz/seed.mts";

const API_KEY = "gms_fuzz_seed_test";

describe("the fuzzing run's seeded objects", () => {
  let emulator: RunningEmulator;
  let seeded: Seeded;
  let document: OpenApiDocument;
  beforeAll(async () => {
    emulator = await startEmulator({ fixtures: fuzzFixtures(API_KEY), fineTuneSeconds: 0 });
    seeded = await seedObjects(emulator.url, API_KEY);
    document = (await (await fetch(`${emulator.url}/openapi.json`)).json()) as OpenApiDocument;
  });
  afterAll(() => emulator?.close());

  it("names the collection of each path parameter by the segment before it", () => {
    expect([...pathCollections("/contexts/{contextGuid}/documents/{guid}")]).toEqual([
      ["contextGuid", "contexts"],
      ["guid", "documents"],
    ]);
    expect([...pathCollections("/datasets/app/{app}")]).toEqual([["app", "apps"]]);
    expect([...pathCollections("/workflows/{guid}/result/{runGuid}")]).toEqual([
      ["guid", "workflows"],
      ["runGuid", "runs"],
    ]);
  });

  it("seeds an object that exists for every collection a route names", async () => {
    const named = new Set(Object.keys(document.paths).flatMap((path) => [...pathCollections(path).values()]));
    for (const collection of named) expect(seeded.get(collection)?.kept.length, collection).toBeGreaterThan(0);
    for (const guid of seeded.get("apps")!.kept) expect((await fetch(`${emulator.url}/apps/${guid}`, auth)).status).toBe(200);
    const [context] = seeded.get("contexts")!.kept;
    for (const guid of seeded.get("documents")!.kept) {
      expect((await fetch(`${emulator.url}/contexts/${context}/documents/${guid}`, auth)).status).toBe(200);
    }
  });

  it("binds path parameters and object fields to the seeded GUIDs, a DELETE's last parameter to the doomed ones", () => {
    const config = seededConfig(document, seeded, "headers = {}");
    const block = (name: string) => {
      const at = config.indexOf(`include-name = "${name}"`);
      expect(at, name).toBeGreaterThan(-1);
      return config.slice(at).split("\n")[1]!;
    };
    expect(block("GET /apps/{guid}")).toBe('parameters = { "path.guid" = { dictionary = "kept:apps", probability = 0.85 } }');
    expect(block("DELETE /apps/{guid}")).toBe('parameters = { "path.guid" = { dictionary = "doomed:apps", probability = 0.85 } }');
    expect(block("DELETE /contexts/{contextGuid}/documents/{guid}")).toContain('"path.contextGuid" = { dictionary = "kept:contexts"');
    expect(block("DELETE /contexts/{contextGuid}/documents/{guid}")).toContain('"path.guid" = { dictionary = "doomed:documents"');
    expect(block("POST /feedback/{guid}")).toContain('dictionary = "kept:data"');
    expect(block("POST /experiments")).toContain('"body.primary_action" = { dictionary = "kept:actions"');
    expect(config).toContain(`[dictionaries."kept:apps"]\nvalues = ${JSON.stringify(seeded.get("apps")!.kept)}`);
    // Only operations: a path item's `servers` is not one.
    expect(config).not.toMatch(/include-name = "SERVERS/);
  });
});

const auth = { headers: { authorization: `Bearer ${API_KEY}` } };
