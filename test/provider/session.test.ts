/**
 * The session (src/provider/session.ts): a configuration, the clients made from it and the stack's claims. One client
 * per workspace connection within a session, none shared with another session; the claims of a connection stay the
 * session's when its clients are closed and made again; a new configuration is the one the next clients are made with.
 * What sessions share (the rate limiter) is tested in ./rate-limit-config.test.ts.
 */
import { describe, expect, it } from "vitest";
import { Session } from "../../src/provider/session";
import { ConfigurationError } from "../../src/settings";

const ACME = { baseUrl: "https://acme.example/v1", apiKey: "gms_acme_key" };

describe("a session", () => {
  it("makes one client per service and key, a trailing slash aside, and another session makes its own", async () => {
    const session = new Session();
    const client = session.clientFor(ACME);
    expect(session.clientFor({ ...ACME, baseUrl: `${ACME.baseUrl}/` })).toBe(client);
    expect(session.clientFor({ ...ACME, apiKey: "gms_other_key" })).not.toBe(client);
    const other = new Session();
    expect(other.clientFor(ACME)).not.toBe(client);
    await Promise.all([session.close(), other.close()]);
  });

  it("keeps a connection's claims, not its clients' own: a client made again after close carries them", async () => {
    const session = new Session();
    session.clientFor(ACME).claimed.add("6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f");
    await session.close();
    const again = session.clientFor(ACME);
    expect([...again.claimed]).toEqual(["6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f"]);
    expect(session.clientFor({ ...ACME, apiKey: "gms_other_key" }).claimed.size).toBe(0);
    expect(new Session().clientFor(ACME).claimed.size).toBe(0);
    await session.close();
  });

  it("makes its next clients with the configuration it was given last, and refuses a bad one naming the setting", async () => {
    const session = new Session();
    session.configure({ baseUrl: "https://configured.example/v1/", apiKey: "gms_configured_key", requestDeadlineMs: "1500" });
    expect(session.effectiveBaseUrl(undefined)).toBe("https://configured.example/v1");
    expect(session.effectiveBaseUrl({ baseUrl: ACME.baseUrl })).toBe(ACME.baseUrl);
    expect(session.clientFor(undefined).requestDeadlineMs).toBe(1500);
    session.configure({ baseUrl: "https://configured.example/v1", apiKey: "gms_second_key", requestDeadlineMs: "soon" });
    expect(() => session.clientFor(undefined)).toThrow(new ConfigurationError("gms:requestDeadlineMs must be a whole number of 0 or more"));
    session.configure({});
    expect(session.missingSettings(ACME)).toEqual([]);
    await session.close();
  });
});
