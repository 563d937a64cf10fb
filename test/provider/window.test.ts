/**
 * A placeholder's creation window on the service's clock (src/provider/window.ts): the provider's own
 * windows pass as they are; LocalEngine's, read on the engine machine's clock, are shifted by the skew the
 * client measures from the service's `Date` header, so that a service minutes behind or ahead still has
 * the object a killed run's create made inside the window, and older ones outside it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GmsClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { LOCAL_CLOCK, SKEW_MARGIN_MS, serviceWindow } from "../../src/provider/window";
import { appKind } from "../../src/resources/app";

const MINUTES = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe("serviceWindow", () => {
  const since = Date.parse("2030-01-01T12:00:00.000Z");
  const until = since + 4_000;

  it("takes a window without the local mark as the service's time already", () => {
    const clock = { serverNow: () => since - 10 * MINUTES };
    expect(serviceWindow({ since: iso(since), until: iso(until) }, clock, since)).toEqual({ since, until });
  });

  it("shifts a window read on this machine's clock by the measured skew, widened by the margin", () => {
    for (const skew of [-10 * MINUTES, 0, 5_000, 3 * MINUTES]) {
      const clock = { serverNow: () => until + 1_000 + skew };
      expect(serviceWindow({ since: iso(since), until: iso(until), clock: LOCAL_CLOCK }, clock, until + 1_000)).toEqual({
        since: since + skew - SKEW_MARGIN_MS,
        until: until + skew + SKEW_MARGIN_MS,
      });
    }
  });
});

describe.each([
  ["4 minutes behind", -4 * MINUTES],
  ["6 minutes ahead of", 6 * MINUTES],
])("a local window against a service whose clock is %s this machine's", (_, offsetMs) => {
  let emulator: RunningEmulator;
  let client: GmsClient;

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, clockOffsetMs: offsetMs });
    client = new GmsClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await client?.close();
    await emulator?.close();
  });

  it("holds the object made in it, by the service's createdAt", async () => {
    const inputs = { name: "Windowed", description: `${offsetMs}` };
    const at = new Date().toISOString();
    const made = await appKind.create(client, inputs as never);
    const window = { since: at, until: new Date().toISOString(), clock: LOCAL_CLOCK } as const;

    // As the provider resolves a placeholder: the lookup first, whose answers carry the service's clock.
    const candidates = await appKind.findCreated(client, inputs as never);
    expect(candidates.map((candidate) => candidate.guid)).toEqual([made.guid]);
    const inWindow = (bounds: { since: number; until: number }) =>
      candidates
        .filter((candidate) => Date.parse(candidate.createdAt!) >= bounds.since && Date.parse(candidate.createdAt!) <= bounds.until)
        .map((candidate) => candidate.guid);
    expect(inWindow(serviceWindow(window, client))).toEqual([made.guid]);
    // Read as the service's time, the same window misses it: the skew the shift makes up for.
    expect(inWindow({ since: Date.parse(window.since), until: Date.parse(window.until) })).toEqual([]);
  });
});
