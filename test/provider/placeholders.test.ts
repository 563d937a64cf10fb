/**
 * Placeholders (creates whose answer was lost and whose lookup failed too) settled through the real
 * dynamic-provider host against the emulator: a placeholder takes only an object no other resource of the
 * stack holds (every id the engine lists in GMS_STACK_IDS_FILE, met in this process or not), matched on
 * every field that identifies it (a connection's provider type; a file-backed Context Source's upload);
 * two placeholders read at once never take one object; and an object nothing tells apart from its own is
 * named in a warning, never adopted nor deleted.
 */
import { createHash } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ProviderHost } from "../../src/testing/host";
import { type StormProxy, startStormProxy } from "../testing/placeholders-scenario";
import { partialOf, type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

type Props = Record<string, unknown>;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
/** An asset as the engine hands it to a provider (see context-source.test.ts). */
const textAsset = (text: string) => ({ "4dabf18193072939515e22adb298388d": "c44067f5952c0a294b673a41bacd8c17", hash: sha256(text), text });
const KEY = "sk-placeholders-3e9d1c";

describe("placeholders through the dynamic-provider host", () => {
  let bed: Testbed;
  /** A host told which ids the stack holds, as the engines tell it. */
  let host: ProviderHost;
  let proxy: StormProxy;
  const idsFile = join(tmpdir(), `gms-placeholder-ids-${process.pid}.txt`);
  let handbook: string;
  let connection: Registration;
  let named: Registration;
  let source: Registration;
  let dataset: Registration;

  /** The lines the host sent the engine's log. */
  const logged: string[] = [];

  beforeAll(async () => {
    bed = await startTestbed();
    writeFileSync(idsFile, "");
    host = await ProviderHost.start({
      cwd: bed.dir,
      project: "gms-test",
      stack: "dev",
      env: { GMS_STACK_IDS_FILE: idsFile },
      onLog: (line) => logged.push(line),
    });
    await host.configure({ "gms:baseUrl": bed.emulator.url, "gms:apiKey": bed.emulator.apiKey, "gms:maxRetries": "0" });
    proxy = await startStormProxy(bed.emulator);
    const workspace = (await bed.api("GET", "/workspaces/current")).body.guid;
    handbook = (await bed.api("GET", `/workspaces/${workspace}/context`)).body.find((c: { name: string }) => c.name === "Handbook").guid;
    const registered = bed.capture(`
      new gms.ProviderConnection("pc", { provider: "openai", key: "${KEY}" });
      new gms.ProviderConnection("named", { provider: "openai", key: "${KEY}", name: "main" });
      new gms.ContextSource("source", { context: ${JSON.stringify(handbook)}, url: "https://docs.example.com/placeholder.md" });
      new gms.Dataset("dataset", { name: "Doubtful" });
    `);
    [connection, named, source, dataset] = ["pc", "named", "source", "dataset"].map((name) => registered.find((r) => r.name === name)!) as [
      Registration,
      Registration,
      Registration,
      Registration,
    ];
  });
  afterAll(async () => {
    await proxy?.close();
    await host?.close();
    await bed?.close();
    rmSync(idsFile, { force: true });
  });

  /** The checked inputs of `registration` with `changes`. */
  const checked = async (registration: Registration, changes: Props = {}): Promise<Props> => {
    const result = await host.check(urnOf(registration), {}, { ...registration.inputs, ...changes });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };
  /** What the provider records for a create whose answer was lost, in the window `[since, until]` (ISO 8601). */
  const placeholder = (inputs: Props, since: string, until: string, extra: Props = {}) => ({
    id: `unresolved-${Math.random().toString(16).slice(2)}`,
    properties: { ...inputs, __unresolvedCreate: { since, until, ...extra } },
  });
  /** Runs `make` and answers the window around it, by the emulator's clock (the same as this process's). */
  const windowAround = async <T>(make: () => Promise<T>): Promise<{ made: T; since: string; until: string }> => {
    const since = new Date(Date.now() - 1).toISOString();
    const made = await make();
    return { made, since, until: new Date(Date.now() + 1).toISOString() };
  };
  const newConnection = async (body: Props): Promise<string> => {
    const answer = await bed.api("POST", "/providers", { key: "sk-made-by-the-test", ...body });
    expect(answer.status).toBe(200);
    return answer.body.guid;
  };
  const exists = async (path: string) => (await bed.api("GET", path)).status === 200;
  const holdsOnly = (...ids: string[]) => writeFileSync(idsFile, ids.map((id) => `${id}\n`).join(""));
  const warnings = () => logged.filter((line) => line.startsWith("warning: "));
  /** The warnings after the first `from`, once `count` of them have arrived. */
  const warningsSince = async (from: number, count: number) => {
    await vi.waitFor(() => expect(warnings().length).toBeGreaterThanOrEqual(from + count));
    return warnings().slice(from);
  };

  it("never takes an object another resource of the stack holds, though this host never met that resource", async () => {
    const url = "https://sibling.example.com/v1";
    const { made, since, until } = await windowAround(async () => ({
      sibling: await newConnection({ provider: "openai", url }),
      own: await newConnection({ provider: "openai", url }),
    }));
    const { id, properties } = placeholder(await checked(connection, { url }), since, until);
    // A host that is not told what the stack holds cannot tell the two identical connections apart.
    await expect(bed.host.read(urnOf(connection), id, properties)).rejects.toThrow(/2 objects match the create whose answer was lost/);

    holdsOnly(made.sibling);
    // `up` (replacing the placeholder) and `destroy` delete its own object only.
    await host.delete(urnOf(connection), id, properties);
    expect(await exists(`/providers/${made.own}`)).toBe(false);
    expect(await exists(`/providers/${made.sibling}`)).toBe(true);
    // With only the sibling in the window, refresh drops the placeholder and delete deletes nothing.
    expect((await host.read(urnOf(connection), id, properties)).id).toBe("");
    await host.delete(urnOf(connection), id, properties);
    expect(await exists(`/providers/${made.sibling}`)).toBe(true);

    // Refresh adopts its own object beside the sibling.
    const later = await windowAround(() => newConnection({ provider: "openai", url }));
    const refreshed = placeholder(await checked(connection, { url }), since, later.until);
    expect((await host.read(urnOf(connection), refreshed.id, refreshed.properties)).id).toBe(later.made);
  });

  it("ignores a connection of another provider type: an unnamed one by the nickname it starts with, a named one by its Model", async () => {
    const url = "https://types.example.com/v1";
    const { made, since, until } = await windowAround(async () => ({
      anthropic: await newConnection({ provider: "anthropic", url }),
      own: await newConnection({ provider: "openai", url }),
    }));
    const { id, properties } = placeholder(await checked(connection, { url }), since, until);
    holdsOnly();
    await host.delete(urnOf(connection), id, properties);
    expect(await exists(`/providers/${made.own}`)).toBe(false);
    expect(await exists(`/providers/${made.anthropic}`)).toBe(true);
    expect((await host.read(urnOf(connection), id, properties)).id).toBe("");
    await host.delete(urnOf(connection), id, properties);
    expect(await exists(`/providers/${made.anthropic}`)).toBe(true);

    // A named connection's nickname is its name; a Model linked to it shows its type.
    const namedUrl = "https://named.example.com/v1";
    const other = await windowAround(async () => {
      const guid = await newConnection({ provider: "anthropic", name: "main", url: namedUrl });
      expect((await bed.api("POST", "/models", { llm: "claude-x", provider: guid, key: "sk-made-by-the-test" })).status).toBe(200);
      return guid;
    });
    const namedPlaceholder = placeholder(await checked(named, { url: namedUrl }), other.since, other.until);
    expect((await host.read(urnOf(named), namedPlaceholder.id, namedPlaceholder.properties)).id).toBe("");
    await host.delete(urnOf(named), namedPlaceholder.id, namedPlaceholder.properties);
    expect(await exists(`/providers/${other.made}`)).toBe(true);
  });

  it("takes an unnamed connection that has the declared nickname already: its create had set it before the run stopped", async () => {
    const url = "https://nicknamed.example.com/v1";
    const { made, since, until } = await windowAround(async () => {
      const guid = await newConnection({ provider: "openai", url });
      expect((await bed.api("PUT", `/providers/${guid}`, { nickname: "Production" })).status).toBe(200);
      return guid;
    });
    holdsOnly();
    // Without the nickname declared, nothing shows its type any more.
    const plain = placeholder(await checked(connection, { url }), since, until);
    expect((await host.read(urnOf(connection), plain.id, plain.properties)).id).toBe("");
    const nicknamed = placeholder(await checked(connection, { url, nickname: "Production" }), since, until);
    expect((await host.read(urnOf(connection), nicknamed.id, nicknamed.properties)).id).toBe(made);
  });

  it("two placeholders read at once (a refresh reads in parallel) never take one object", async () => {
    const url = "https://twins.example.com/v1";
    const { made, since, until } = await windowAround(() => newConnection({ provider: "openai", url }));
    const inputs = await checked(connection, { url });
    const [first, second] = [placeholder(inputs, since, until), placeholder(inputs, since, until)];
    const reads = await Promise.all([first, second].map(({ id, properties }) => host.read(urnOf(connection), id, properties)));
    expect(reads.map((read) => read.id).sort()).toEqual(["", made].sort());
  });

  it("records a file-backed Context Source's upload in its placeholder: refresh adopts its object, delete deletes it", async () => {
    const text = "Returns are accepted within 30 days.";
    const inputs = await checked(source, { url: undefined, file: textAsset(text), connection: { baseUrl: proxy.baseUrl() } });
    const sources = async () =>
      ((await bed.api("GET", `/contexts/${handbook}/context_sources`)).body as { guid: string; url: string }[]).map(({ guid, url }) => ({
        guid,
        url,
      }));
    /** A create whose POST is served but its answer lost, and whose lookups fail: its placeholder and the source it made. */
    const lostCreate = async () => {
      const before = (await sources()).map((s) => s.guid);
      proxy.setRule(({ method, path }) =>
        method === "POST" && path.endsWith("/context_sources")
          ? { kind: "lose" }
          : method === "GET" && path.endsWith("/context_sources")
            ? { kind: "answer", status: 503 }
            : { kind: "forward" },
      );
      const failure = await host.create(urnOf(source), inputs).catch((error: unknown) => error);
      proxy.setRule(() => ({ kind: "forward" }));
      const { id, properties } = partialOf(failure);
      expect(id).toMatch(/^unresolved-/);
      const made = (await sources()).filter((s) => !before.includes(s.guid));
      expect(made).toHaveLength(1);
      return { id, properties, lost: made[0]! };
    };
    holdsOnly();

    const refreshed = await lostCreate();
    // The upload's signed URL is recorded hashed: while valid it grants access to the file.
    expect(refreshed.properties.__unresolvedCreate).toMatchObject({ identity: { uploadedUrlSha256: sha256(refreshed.lost.url) } });
    expect(JSON.stringify(refreshed.properties)).not.toContain(refreshed.lost.url.split("?")[1]);
    const read = await host.read(urnOf(source), refreshed.id, refreshed.properties);
    expect(read.id).toBe(refreshed.lost.guid);
    await host.delete(urnOf(source), read.id, read.properties);
    expect(await exists(`/contexts/${handbook}/context_sources/${refreshed.lost.guid}`)).toBe(false);

    // `destroy` (or `up`, replacing it) deletes a placeholder's source.
    const destroyed = await lostCreate();
    await host.delete(urnOf(source), destroyed.id, destroyed.properties);
    expect(await exists(`/contexts/${handbook}/context_sources/${destroyed.lost.guid}`)).toBe(false);
  });

  it("names each object it cannot tell apart from its own in a warning, and neither adopts nor deletes it", async () => {
    // A file-backed source recorded without its upload (as an engine's journal records a create under way).
    const text = "Gift cards are final.";
    // A source whose file cannot be read back (a URL of another origin than the service's): nothing tells it apart.
    const {
      made: upload,
      since,
      until,
    } = await windowAround(
      async () =>
        (await bed.api("POST", `/contexts/${handbook}/context_sources`, { url: "https://elsewhere.example.com/gift-cards.md" })).body
          .guid as string,
    );
    const fileBacked = placeholder(await checked(source, { url: undefined, file: textAsset(text) }), since, until);
    holdsOnly();
    const before = warnings().length;
    expect((await host.read(urnOf(source), fileBacked.id, fileBacked.properties)).id).toBe("");
    await host.delete(urnOf(source), fileBacked.id, fileBacked.properties);
    expect(await exists(`/contexts/${handbook}/context_sources/${upload}`)).toBe(true);
    const named = await warningsSince(before, 2);
    expect(named).toEqual([
      expect.stringContaining(`ContextSource ${fileBacked.id}: the create whose answer was lost may have made this object`),
      expect.stringContaining(`ContextSource ${fileBacked.id}: the create whose answer was lost may have made this object`),
    ]);
    expect(named[0]).toContain(`${upload} (nothing recorded identifies the file uploaded for a StringAsset`);
    expect(named[0]).toContain("The refresh drops the placeholder without adopting any object");
    expect(named[1]).toContain("The placeholder is deleted without deleting any object");

    // A Dataset reports no creation time: without the list taken before its POST, nothing tells a new one from an old one.
    const doubtful = await windowAround(
      async () => (await bed.api("POST", "/datasets", { name: "Doubtful", description: null, app: null })).body.guid as string,
    );
    const datasetPlaceholder = placeholder(await checked(dataset), doubtful.since, doubtful.until);
    const count = warnings().length;
    expect((await host.read(urnOf(dataset), datasetPlaceholder.id, datasetPlaceholder.properties)).id).toBe("");
    expect(await warningsSince(count, 1)).toEqual([
      expect.stringContaining(
        `Dataset "Doubtful" ${datasetPlaceholder.id}: the create whose answer was lost may have made this object, which nothing tells ` +
          `apart from objects it did not make: ${doubtful.made} (the service reports no creation time for a Dataset and no list was taken before the POST)`,
      ),
    ]);
    // With the list taken before the POST (as the provider's own placeholders have it), the new one is its object.
    const listed = placeholder(await checked(dataset), doubtful.since, doubtful.until, { existing: [] });
    expect((await host.read(urnOf(dataset), listed.id, listed.properties)).id).toBe(doubtful.made);
  });

  it("tells a file-backed source recorded without its upload by the name its create gives it, else by the bytes its URL serves", async () => {
    const text = "Refunds take five days.";
    /** A source of an upload of `content`, named `name` as a create names it, or left as the POST made it. */
    const sourceOf = async (content: string, name?: string) => {
      const url = (await bed.api("POST", "/files/upload", { data: Buffer.from(content).toString("base64") })).body.url;
      const guid = (await bed.api("POST", `/contexts/${handbook}/context_sources`, { url })).body.guid as string;
      const config = { name, splitterConfig: { chunk_size: 400, chunk_overlap: 40 }, loaderConfig: [] };
      if (name !== undefined) expect((await bed.api("PUT", `/contexts/${handbook}/context_sources/${guid}`, config)).status).toBe(200);
      return guid;
    };
    const read = async ({ since, until }: { since: string; until: string }) => {
      const recorded = placeholder(await checked(source, { url: undefined, file: textAsset(text), name: "Refunds" }), since, until);
      return (await host.read(urnOf(source), recorded.id, recorded.properties)).id;
    };
    const before = warnings().length;
    holdsOnly();
    // The one of its name; a source of other bytes is no match.
    const named = await windowAround(async () => [await sourceOf(text, "Refunds"), await sourceOf("Another file.")]);
    expect(await read(named)).toBe(named.made[0]);
    // A create stopped before naming its source: the unnamed one whose URL serves the asset's bytes.
    const unnamed = await windowAround(() => sourceOf(text));
    expect(await read(unnamed)).toBe(unnamed.made);
    // Both held: nothing left to take, and nothing in doubt.
    holdsOnly(named.made[0]!, unnamed.made);
    expect(await read({ since: named.since, until: unnamed.until })).toBe("");
    expect(warnings().length).toBe(before);
  });
});
