import { createHash } from "node:crypto";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FILES_LOADER_ID } from "../../src/api/context-sources";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestLogEntry } from "../../src/emulator/server";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";
import { SIG_KEY, UNKNOWN } from "../../src/provider/values";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17";

/**
 * An asset as the engine hands it to a provider: the SDK sends `{[sig]: assetSig, path|text}` (checked in
 * the first test), and the engine re-serializes it with the content's SHA-256 as `hash` (pulumi/pulumi
 * `sdk/go/common/resource/asset` `Serialize`). The SDK's mocks cannot show this: they turn the asset back
 * into a FileAsset object whose path is a promise, so the capture holds `{__pulumiAsset: true, path: {}}`.
 */
const engineAsset = (source: { path: string } | { text: string }, content: string) => ({
  [SIG_KEY]: ASSET_SIG,
  hash: sha256(content),
  ...source,
});

/**
 * The requests the provider made: the emulator's Files loader fetches signed URLs from the emulator itself
 * (GET /v1/files/...) while processing, and those are the service's own requests, not the provider's.
 */
const byProvider = (requests: RequestLogEntry[]) => requests.filter((r) => !(r.method === "GET" && r.path.startsWith("/v1/files/")));
const lines = (requests: RequestLogEntry[]) => byProvider(requests).map((r) => `${r.method} ${r.path}`);

/** The request lines with a wait's trailing polls (one or more GETs of the same path) folded into one `... (polled)` line. */
const withPolls = (requests: RequestLogEntry[]) => {
  const all = lines(requests);
  const last = all[all.length - 1]!;
  let first = all.length - 1;
  while (first > 0 && all[first - 1] === last) first -= 1;
  return [...all.slice(0, first), `${last} (polled)`];
};

describe("ContextSource through the dynamic-provider host", () => {
  let bed: Testbed;
  let handbook: string;
  let faq: string;
  let signedUrl: string;
  let byUrl: Registration;
  let byText: Registration;
  let byFile: Registration;
  const HANDBOOK_TEXT = "Returns are accepted within 30 days.\nRefunds go to the original card.\nGift cards are final.";
  const POLICIES = "Staff may work from home two days a week.\n\nExpenses need a receipt.\n\nTravel is booked through the portal.";

  beforeAll(async () => {
    bed = await startTestbed();
    const workspace = (await bed.api("GET", "/workspaces/current")).body;
    const contexts = (await bed.api("GET", `/workspaces/${workspace.guid}/context`)).body as { guid: string; name: string }[];
    handbook = contexts.find((context) => context.name === "Handbook")!.guid;
    faq = contexts.find((context) => context.name === "FAQ")!.guid;
    // A URL the service can fetch: the emulator's own signed URL of an upload.
    signedUrl = (
      await bed.api("POST", "/files/upload", { data: `data:text/plain;base64,${Buffer.from(HANDBOOK_TEXT).toString("base64")}` })
    ).body.url;
    writeFileSync(join(bed.dir, "policies.txt"), POLICIES);
    const registrations = bed.capture(`
      new gms.ContextSource("returns", {
        context: ${JSON.stringify(handbook)},
        url: ${JSON.stringify(signedUrl)},
        name: "Returns policy",
        loaderConfig: [{ name: "encoding", value: "utf-8" }],
        splitterConfig: { chunkSize: 40 },
      });
      new gms.ContextSource("greeting", { context: ${JSON.stringify(faq)}, file: new pulumi.asset.StringAsset("Hello.\\nWe answer within a day."), process: true, waitForIndexing: true });
      new gms.ContextSource("policies", {
        context: ${JSON.stringify(handbook)},
        file: new pulumi.asset.FileAsset("policies.txt"),
        splitterConfig: { chunkSize: 50 },
        process: true,
        waitForIndexing: { timeoutSeconds: 20 },
      });
    `);
    // Registrations arrive in the order their inputs resolved, not program order.
    const named = (name: string) => registrations.find((registration) => registration.name === name)!;
    [byUrl, byText, byFile] = [named("returns"), named("greeting"), named("policies")];
  });
  afterAll(() => bed?.close());

  const textAsset = () => engineAsset({ text: "Hello.\nWe answer within a day." }, "Hello.\nWe answer within a day.");
  const fileAsset = (content = POLICIES) => engineAsset({ path: "policies.txt" }, content);

  const checked = async (registration: Registration, inputs: Record<string, unknown>) => {
    const result = await bed.host.check(urnOf(registration), {}, { ...registration.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };
  const sources = async (context: string) =>
    (await bed.api("GET", `/contexts/${context}/context_sources`)).body as { guid: string; url: string }[];

  it("registers as gms:ContextSource with a tiny __provider; a Pulumi asset reaches the engine tagged as an asset", async () => {
    expect(byUrl.type).toBe("pulumi-nodejs:dynamic/gms:ContextSource");
    expect(byUrl.inputs.__provider).toContain('require("pulumi-gms/');
    expect(byUrl.secrets).toEqual([]);
    expect(byText.inputs.file).toMatchObject({ __pulumiAsset: true });
    expect(byFile.inputs.file).toMatchObject({ __pulumiAsset: true });
    // What the SDK sends the engine for the program's FileAsset (the engine adds `hash`, see engineAsset).
    const sdk = require(require.resolve("@pulumi/pulumi", { paths: [bed.dir] }));
    const rpc = require(require.resolve("@pulumi/pulumi/runtime/rpc", { paths: [bed.dir] }));
    expect(await rpc.serializeProperty("file", new sdk.asset.FileAsset("policies.txt"), new Set())).toEqual({
      [SIG_KEY]: ASSET_SIG,
      __pulumiAsset: true,
      path: "policies.txt",
    });
  });

  it("check turns an asset into {path|text, hash} with the content's SHA-256, with or without the engine's hash", async () => {
    const fromEngine = await checked(byFile, { file: fileAsset() });
    expect(fromEngine.file).toEqual({ path: "policies.txt", hash: sha256(POLICIES) });
    const fromSdk = await checked(byFile, { file: { [SIG_KEY]: ASSET_SIG, __pulumiAsset: true, path: "policies.txt" } });
    expect(fromSdk.file).toEqual(fromEngine.file);
    expect((await checked(byText, { file: textAsset() })).file).toEqual({
      text: "Hello.\nWe answer within a day.",
      hash: sha256("Hello.\nWe answer within a day."),
    });
    // Earlier state's normalized form checks to itself.
    expect((await checked(byFile, { file: fromEngine.file })).file).toEqual(fromEngine.file);
    expect(fromEngine.loader).toBe("files");
    expect(fromEngine.splitterConfig).toEqual({ chunkSize: 50, chunkOverlap: 0 });
  });

  it("creates from a url, then a no-op diff costs no request, each updatable field updates in place, refresh shows drift, delete is idempotent", async () => {
    const inputs = await checked(byUrl, {});
    const created = await bed.counting(() => bed.host.create(urnOf(byUrl), inputs));
    const { id, properties } = created.result;
    expect(lines(created.requests)).toEqual([
      `POST /v1/contexts/${handbook}/context_sources`,
      `PUT /v1/contexts/${handbook}/context_sources/${id}`,
    ]);
    expect(withoutProvider(properties)).toMatchObject({
      guid: id,
      context: handbook,
      url: signedUrl,
      sourceUrl: signedUrl,
      loader: "files",
      loaderId: FILES_LOADER_ID,
      name: "Returns policy",
      loaderConfig: [{ name: "encoding", value: "utf-8" }],
      splitterConfig: { chunkSize: 40, chunkOverlap: 0 },
      indexingStatus: "pending",
      indexedAt: null,
      indexingMetadata: null,
    });
    expect(properties.createdAt).toEqual(expect.any(String));

    const same = await bed.counting(() => bed.host.diff(urnOf(byUrl), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);

    for (const [field, value, wire] of [
      ["name", "Returns and refunds", "name"],
      ["loaderConfig", [{ name: "encoding", value: "latin1", required: true }], "loader_config"],
      ["splitterConfig", { chunkSize: 30, chunkOverlap: 5 }, "splitter_config"],
    ] as const) {
      const news = await checked(byUrl, { ...inputs, [field]: value });
      const diff = await bed.counting(() => bed.host.diff(urnOf(byUrl), id, properties, news));
      expect(diff.result).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });
      expect(diff.requests).toHaveLength(0);
      const updated = await bed.counting(() => bed.host.update(urnOf(byUrl), id, properties, news));
      // One PUT carrying all three (the service requires them), no processing: process is not set.
      expect(lines(updated.requests)).toEqual([`PUT /v1/contexts/${handbook}/context_sources/${id}`]);
      expect(updated.result.properties[field]).toEqual(value);
      const live = (await bed.api("GET", `/contexts/${handbook}/context_sources/${id}`)).body;
      expect(live[wire]).toEqual(field === "splitterConfig" ? { chunk_size: 30, chunk_overlap: 5 } : value);
      Object.assign(properties, updated.result.properties);
      Object.assign(inputs, news);
    }
    const live = (await bed.api("GET", `/contexts/${handbook}/context_sources/${id}`)).body;
    expect(live).toMatchObject({
      name: "Returns and refunds",
      loader_config: [{ name: "encoding", value: "latin1", required: true }],
      indexing_status: "pending",
    });

    // Turning process on processes now; with the wait, the update returns once indexed.
    const processing = await checked(byUrl, { ...inputs, process: true, waitForIndexing: { timeoutSeconds: 20 } });
    expect(await bed.host.diff(urnOf(byUrl), id, properties, processing)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const processed = await bed.counting(() => bed.host.update(urnOf(byUrl), id, properties, processing));
    expect(withPolls(processed.requests)).toEqual([
      `POST /v1/context_sources/${id}/process`,
      `GET /v1/contexts/${handbook}/context_sources/${id} (polled)`,
    ]);
    expect(processed.result.properties).toMatchObject({
      indexingStatus: "indexed",
      indexingMetadata: { documents: 5, characters: HANDBOOK_TEXT.length, contentType: "text/plain" },
      process: true,
      waitForIndexing: { timeoutSeconds: 20 },
    });
    Object.assign(properties, processed.result.properties);
    // With process on, a config change is one PUT, then processing (here without a wait: one GET of the new status).
    const resplit = await checked(byUrl, { ...processing, splitterConfig: { chunkSize: 1000, chunkOverlap: 0 }, waitForIndexing: false });
    const resplitUpdate = await bed.counting(() => bed.host.update(urnOf(byUrl), id, properties, resplit));
    expect(lines(resplitUpdate.requests)).toEqual([
      `PUT /v1/contexts/${handbook}/context_sources/${id}`,
      `POST /v1/context_sources/${id}/process`,
      `GET /v1/contexts/${handbook}/context_sources/${id}`,
    ]);
    // The emulator may already have finished the small file by the time of that GET.
    expect(resplitUpdate.result.properties.indexingStatus).toMatch(/^(processing|indexed)$/);
    Object.assign(properties, resplitUpdate.result.properties);
    // waitForIndexing alone has no value in the service: the update records it and makes no request.
    const patient = await checked(byUrl, { ...resplit, waitForIndexing: { timeoutSeconds: 60 } });
    expect(await bed.host.diff(urnOf(byUrl), id, properties, patient)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const recorded = await bed.counting(() => bed.host.update(urnOf(byUrl), id, properties, patient));
    expect(lines(recorded.requests)).toEqual([]);
    expect(recorded.result.properties.waitForIndexing).toEqual({ timeoutSeconds: 60 });

    // Replace-only fields: diff only, no request.
    for (const [field, value] of [
      ["context", faq],
      ["url", "https://docs.example.com/returns.txt"],
    ] as const) {
      const news = await checked(byUrl, { ...resplit, [field]: value });
      const diff = await bed.counting(() => bed.host.diff(urnOf(byUrl), id, properties, news));
      expect(diff.result).toEqual({ changes: "some", replaces: [field], deleteBeforeReplace: false });
      expect(diff.requests).toHaveLength(0);
    }
    // The loader's GUID is the same loader: no diff.
    expect((await bed.host.diff(urnOf(byUrl), id, properties, await checked(byUrl, { ...resplit, loader: FILES_LOADER_ID }))).changes).toBe(
      "none",
    );
    // Moving from url to file replaces (url, left out, is then no longer managed).
    const toFile = await checked(byUrl, { ...resplit, url: undefined, file: fileAsset() });
    expect(await bed.host.diff(urnOf(byUrl), id, properties, toFile)).toEqual({
      changes: "some",
      replaces: ["file"],
      deleteBeforeReplace: false,
    });

    // The indexing fields change on their own: refresh shows them, and they never cause a diff.
    await bed.emulator.store.contextSources.idle();
    const settled = await bed.host.read(urnOf(byUrl), id, properties, resplit);
    expect(settled.properties).toMatchObject({ indexingStatus: "indexed", indexingMetadata: { documents: 1 } });
    expect(settled.inputs).not.toHaveProperty("indexingStatus");
    expect((await bed.host.diff(urnOf(byUrl), id, settled.properties, resplit)).changes).toBe("none");

    await bed.api("PUT", `/contexts/${handbook}/context_sources/${id}`, {
      name: "Renamed out of band",
      splitterConfig: { chunk_size: 1000 },
      loaderConfig: [],
    });
    const refreshed = await bed.counting(() => bed.host.read(urnOf(byUrl), id, properties, resplit));
    expect(lines(refreshed.requests)).toEqual([`GET /v1/contexts/${handbook}/context_sources/${id}`]);
    expect(refreshed.result.id).toBe(id);
    expect(refreshed.result.properties).toMatchObject({ name: "Renamed out of band", loaderConfig: [], process: true });
    expect(refreshed.result.inputs).toMatchObject({
      name: "Renamed out of band",
      loaderConfig: [],
      context: handbook,
      url: signedUrl,
      loader: "files",
    });
    const drift = await bed.host.diff(urnOf(byUrl), id, refreshed.result.properties, resplit);
    expect(drift).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });

    const deleted = await bed.counting(() => bed.host.delete(urnOf(byUrl), id, refreshed.result.properties));
    expect(deleted.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      `DELETE /v1/contexts/${handbook}/context_sources/${id} 200`,
    ]);
    expect((await bed.api("GET", `/contexts/${handbook}/context_sources/${id}`)).status).toBe(404);
    const again = await bed.counting(() => bed.host.delete(urnOf(byUrl), id, refreshed.result.properties));
    expect(again.requests.map((r) => r.status)).toEqual([404]);
    expect((await bed.host.read(urnOf(byUrl), id, refreshed.result.properties)).id).toBe("");
  });

  it("an update of one field keeps the live values of the fields the program leaves out (the PUT replaces all three)", async () => {
    const inputs = await checked(byUrl, { name: undefined, loaderConfig: undefined, splitterConfig: undefined });
    const created = await bed.counting(() => bed.host.create(urnOf(byUrl), inputs));
    const { id, properties } = created.result;
    expect(lines(created.requests)).toEqual([`POST /v1/contexts/${handbook}/context_sources`]);
    await bed.api("PUT", `/contexts/${handbook}/context_sources/${id}`, {
      name: "Set by hand",
      splitterConfig: { chunk_size: 77 },
      loaderConfig: [{ name: "x", value: 1 }],
    });
    const news = await checked(byUrl, { name: undefined, loaderConfig: undefined, splitterConfig: { chunkSize: 60 } });
    const updated = await bed.counting(() => bed.host.update(urnOf(byUrl), id, properties, news));
    expect(lines(updated.requests)).toEqual([
      `GET /v1/contexts/${handbook}/context_sources/${id}`,
      `PUT /v1/contexts/${handbook}/context_sources/${id}`,
    ]);
    expect((await bed.api("GET", `/contexts/${handbook}/context_sources/${id}`)).body).toMatchObject({
      name: "Set by hand",
      loader_config: [{ name: "x", value: 1 }],
      splitter_config: { chunk_size: 60, chunk_overlap: 0 },
    });
    await bed.host.delete(urnOf(byUrl), id, updated.result.properties);
  });

  it("creates from a StringAsset: upload, create, process, wait until indexed; the Context's Documents exist", async () => {
    const inputs = await checked(byText, { file: textAsset() });
    const created = await bed.counting(() => bed.host.create(urnOf(byText), inputs));
    const { id, properties } = created.result;
    expect(withPolls(created.requests)).toEqual([
      "POST /v1/files/upload",
      `POST /v1/contexts/${faq}/context_sources`,
      `POST /v1/context_sources/${id}/process`,
      `GET /v1/contexts/${faq}/context_sources/${id} (polled)`,
    ]);
    expect(withoutProvider(properties)).toMatchObject({
      guid: id,
      context: faq,
      file: { text: "Hello.\nWe answer within a day.", hash: sha256("Hello.\nWe answer within a day.") },
      sourceUrl: expect.stringMatching(/\/v1\/files\/[0-9a-f-]+\?expires=\d+&signature=/),
      indexingStatus: "indexed",
      indexedAt: expect.any(String),
      indexingMetadata: { documents: 1, characters: 30, contentType: "text/plain" },
      process: true,
      waitForIndexing: true,
    });
    // The signed URL is not an input: it never appears as `url`, so it cannot make a diff.
    expect(properties).not.toHaveProperty("url");
    const documents = (await bed.api("GET", `/contexts/${faq}/documents`)).body;
    expect(
      documents.data.map((document: { content: string; metadata: Record<string, unknown> }) => [
        document.content,
        document.metadata.context_source,
      ]),
    ).toEqual([["Hello.\nWe answer within a day.", id]]);
    expect((await bed.host.diff(urnOf(byText), id, properties, await checked(byText, { file: textAsset() }))).changes).toBe("none");
    const refreshed = await bed.host.read(urnOf(byText), id, properties, inputs);
    expect(refreshed.properties).not.toHaveProperty("url");
    expect(refreshed.inputs).not.toHaveProperty("url");
    expect(refreshed.inputs?.file).toEqual(inputs.file);
    expect((await bed.host.diff(urnOf(byText), id, refreshed.properties, inputs)).changes).toBe("none");
    const changedText = await checked(byText, { file: engineAsset({ text: "Hello again." }, "Hello again.") });
    expect(await bed.host.diff(urnOf(byText), id, properties, changedText)).toEqual({
      changes: "some",
      replaces: ["file"],
      deleteBeforeReplace: false,
    });
    await bed.host.delete(urnOf(byText), id, properties);
  });

  it("creates from a FileAsset in the program directory, named after the file; changing the file's content replaces", async () => {
    const inputs = await checked(byFile, { file: fileAsset() });
    const created = await bed.counting(() => bed.host.create(urnOf(byFile), inputs));
    const { id, properties } = created.result;
    expect(withPolls(created.requests)).toEqual([
      "POST /v1/files/upload",
      `POST /v1/contexts/${handbook}/context_sources`,
      `PUT /v1/contexts/${handbook}/context_sources/${id}`,
      `POST /v1/context_sources/${id}/process`,
      `GET /v1/contexts/${handbook}/context_sources/${id} (polled)`,
    ]);
    expect(withoutProvider(properties)).toMatchObject({
      name: "policies.txt",
      file: { path: "policies.txt", hash: sha256(POLICIES) },
      splitterConfig: { chunkSize: 50, chunkOverlap: 0 },
      indexingStatus: "indexed",
      indexingMetadata: { documents: 3, characters: POLICIES.length, contentType: "text/plain" },
    });
    expect(properties).not.toHaveProperty("url");
    const documents = (await bed.api("GET", `/contexts/${handbook}/documents`)).body.data as {
      content: string;
      metadata: { context_source: string };
    }[];
    expect(documents.filter((document) => document.metadata.context_source === id).map((document) => document.content)).toEqual([
      "Staff may work from home two days a week.\n\n",
      "Expenses need a receipt.\n\n",
      "Travel is booked through the portal.",
    ]);

    const same = await bed.counting(() => bed.host.diff(urnOf(byFile), id, properties, inputs));
    expect(same.result.changes).toBe("none");
    expect(same.requests).toHaveLength(0);
    // Another input changes: the file does not show up in the diff.
    const renamed = await checked(byFile, { file: fileAsset(), name: "Office policies" });
    expect(await bed.host.diff(urnOf(byFile), id, properties, renamed)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });

    writeFileSync(join(bed.dir, "policies.txt"), `${POLICIES}\n\nPets are welcome on Fridays.`);
    const edited = await checked(byFile, { file: fileAsset(`${POLICIES}\n\nPets are welcome on Fridays.`) });
    expect(edited.file).toEqual({ path: "policies.txt", hash: sha256(`${POLICIES}\n\nPets are welcome on Fridays.`) });
    const replace = await bed.counting(() => bed.host.diff(urnOf(byFile), id, properties, edited));
    expect(replace.result).toEqual({ changes: "some", replaces: ["file"], deleteBeforeReplace: false });
    expect(replace.requests).toHaveLength(0);

    writeFileSync(join(bed.dir, "policies.txt"), POLICIES);
    await bed.host.delete(urnOf(byFile), id, properties);
  });

  it("refuses to upload a file that changed after check, before any request", async () => {
    writeFileSync(join(bed.dir, "notes.txt"), "first version");
    const inputs = await checked(byFile, { file: engineAsset({ path: "notes.txt" }, "first version") });
    writeFileSync(join(bed.dir, "notes.txt"), "second version");
    const start = bed.requests.length;
    await expect(bed.host.create(urnOf(byFile), inputs)).rejects.toThrow(
      /^Cannot create ContextSource: file notes\.txt changed after Pulumi checked it; run the update again so that state records the content that is uploaded\.$/,
    );
    expect(bed.requests.slice(start)).toEqual([]);
  });

  describe("a create that fails midway deletes what it created", () => {
    it("when the service rejects the splitterConfig", async () => {
      const before = (await sources(handbook)).length;
      const inputs = await checked(byUrl, { splitterConfig: { chunkSize: 10, chunkOverlap: 10 } });
      const start = bed.requests.length;
      await expect(bed.host.create(urnOf(byUrl), inputs)).rejects.toThrow(
        /^Cannot create ContextSource for .*: the service rejected splitterConfig \{chunkSize: 10, chunkOverlap: 10\} \(the service answered 400 invalid splitter configuration\).* The Context Source it had created \([0-9a-f-]+\) was deleted again\.$/,
      );
      const made = bed.requests.slice(start);
      expect(made.map((r) => `${r.method} ${r.status}`)).toEqual(["POST 200", "PUT 400", "DELETE 200"]);
      expect(await sources(handbook)).toHaveLength(before);
    });

    it("when processing ends failed (a URL nobody serves)", async () => {
      const before = (await sources(faq)).length;
      const inputs = await checked(byUrl, {
        context: faq,
        url: "http://127.0.0.1:9/handbook.txt",
        process: true,
        waitForIndexing: { timeoutSeconds: 20 },
      });
      const start = bed.requests.length;
      await expect(bed.host.create(urnOf(byUrl), inputs)).rejects.toThrow(
        /^Cannot create ContextSource for http:\/\/127\.0\.0\.1:9\/handbook\.txt: processing http:\/\/127\.0\.0\.1:9\/handbook\.txt failed: fetch failed: .*\. The Context Source it had created \([0-9a-f-]+\) was deleted again\.$/,
      );
      const made = lines(bed.requests.slice(start));
      expect(made[0]).toBe(`POST /v1/contexts/${faq}/context_sources`);
      expect(made.at(-1)).toMatch(new RegExp(`^DELETE /v1/contexts/${faq}/context_sources/`));
      expect(await sources(faq)).toHaveLength(before);
    });

    it("when the wait times out, with an error that says how far it got", async () => {
      // A source that never answers: the loader keeps waiting, so the status stays `processing`.
      const hanging: Server = createServer(() => {});
      await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/slow.txt`;
      try {
        const before = (await sources(handbook)).length;
        const inputs = await checked(byUrl, { url, process: true, waitForIndexing: { timeoutSeconds: 0.5 } });
        const started = Date.now();
        await expect(bed.host.create(urnOf(byUrl), inputs)).rejects.toThrow(
          /had not finished after \d+\.\d s \(indexing_status still "processing" after \d+ checks\); processing continues in the service\. Raise waitForIndexing\.timeoutSeconds.* was deleted again\.$/,
        );
        expect(Date.now() - started).toBeLessThan(5000);
        expect(await sources(handbook)).toHaveLength(before);
      } finally {
        hanging.closeAllConnections();
        await new Promise((resolve) => hanging.close(resolve));
        await bed.emulator.store.contextSources.idle();
      }
    });
  });

  it("an update whose processing ends failed says why and keeps the source (only create rolls back)", async () => {
    const unserved = { url: "http://127.0.0.1:9/gone.txt", name: undefined, loaderConfig: undefined, splitterConfig: undefined };
    const inputs = await checked(byUrl, unserved);
    const { id, properties } = await bed.host.create(urnOf(byUrl), inputs);
    const news = await checked(byUrl, { ...unserved, process: true, waitForIndexing: true });
    await expect(bed.host.update(urnOf(byUrl), id, properties, news)).rejects.toThrow(
      new RegExp(
        `^Cannot update ContextSource ${id} \\(http://127\\.0\\.0\\.1:9/gone\\.txt\\): processing http://127\\.0\\.0\\.1:9/gone\\.txt failed: fetch failed: `,
      ),
    );
    expect((await bed.api("GET", `/contexts/${handbook}/context_sources/${id}`)).body.indexing_status).toBe("failed");
    await bed.host.delete(urnOf(byUrl), id, properties);
  });

  it("an update of a source deleted outside Pulumi says to refresh, whether the config or only processing changed", async () => {
    const unchanged = { name: undefined, loaderConfig: undefined, splitterConfig: undefined };
    const inputs = await checked(byUrl, unchanged);
    const { id, properties } = await bed.host.create(urnOf(byUrl), inputs);
    await bed.api("DELETE", `/contexts/${handbook}/context_sources/${id}`);
    const gone = `ContextSource ${id} no longer exists in the workspace (deleted outside Pulumi?): run \`pulumi refresh\``;
    await expect(bed.host.update(urnOf(byUrl), id, properties, await checked(byUrl, { ...unchanged, name: "Renamed" }))).rejects.toThrow(
      gone,
    );
    await expect(bed.host.update(urnOf(byUrl), id, properties, await checked(byUrl, { ...unchanged, process: true }))).rejects.toThrow(
      gone,
    );
  });

  it("explains a Context that does not exist, listing the workspace's Contexts", async () => {
    const inputs = await checked(byUrl, { context: "00000000-0000-4000-8000-000000000000" });
    await expect(bed.host.create(urnOf(byUrl), inputs)).rejects.toThrow(
      new RegExp(
        `the service answered 404 Context not found\\. Context 00000000-0000-4000-8000-000000000000 may not exist in this workspace; ` +
          `Contexts are created outside the interface\\. The workspace's Contexts: "Handbook" \\(${handbook}\\), "FAQ" \\(${faq}\\)\\.`,
      ),
    );
  });

  it("adopts an existing Context Source by GUID (finding its Context) and updates it to the program; another Context is a clear error", async () => {
    const existing = (await bed.api("POST", `/contexts/${handbook}/context_sources`, { url: signedUrl })).body;
    const inputs = await checked(byUrl, { adopt: existing.guid });
    const adopted = await bed.counting(() => bed.host.create(urnOf(byUrl), inputs));
    expect(adopted.result.id).toBe(existing.guid);
    const workspace = (await bed.api("GET", "/workspaces/current")).body.guid;
    // The program's Context is tried first: one GET, then the PUT that brings it to the program.
    expect(lines(adopted.requests)).toEqual([
      `GET /v1/contexts/${handbook}/context_sources/${existing.guid}`,
      `PUT /v1/contexts/${handbook}/context_sources/${existing.guid}`,
    ]);
    expect(adopted.result.properties).toMatchObject({
      context: handbook,
      name: "Returns policy",
      splitterConfig: { chunkSize: 40, chunkOverlap: 0 },
    });
    expect((await bed.api("GET", `/contexts/${handbook}/context_sources/${existing.guid}`)).body).toMatchObject({
      name: "Returns policy",
      loader_config: [{ name: "encoding", value: "utf-8" }],
      splitter_config: { chunk_size: 40 },
    });

    // Declared under another Context: the source is looked for in every Context, then the mismatch is explained.
    const elsewhere = await checked(byUrl, { adopt: existing.guid, context: faq });
    const mismatch = await bed.counting(() => bed.host.create(urnOf(byUrl), elsewhere).catch((error: Error) => error));
    expect((mismatch.result as Error).message).toMatch(
      new RegExp(`Cannot adopt ContextSource ${existing.guid}: context differs from the program and cannot be changed in place`),
    );
    expect(lines(mismatch.requests)).toEqual([
      `GET /v1/contexts/${faq}/context_sources/${existing.guid}`,
      "GET /v1/workspaces/current",
      `GET /v1/workspaces/${workspace}/context`,
      `GET /v1/contexts/${handbook}/context_sources`,
      `GET /v1/contexts/${handbook}/context_sources/${existing.guid}`,
    ]);
    const missing = await checked(byUrl, { adopt: "00000000-0000-4000-8000-000000000000" });
    await expect(bed.host.create(urnOf(byUrl), missing)).rejects.toThrow(
      /Cannot adopt ContextSource 00000000-0000-4000-8000-000000000000: no such object/,
    );
    await bed.host.delete(urnOf(byUrl), existing.guid, adopted.result.properties);
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const failuresOf = async (inputs: Record<string, unknown>, registration = byUrl) => {
      const result = await bed.counting(() => bed.host.check(urnOf(registration), {}, { ...registration.inputs, ...inputs }));
      expect(result.requests).toHaveLength(0);
      return result.result.failures;
    };
    const both = await failuresOf({ file: textAsset() });
    expect(both.map((f) => f.property)).toEqual(["url", "file"]);
    expect(both[0]!.reason).toMatch(/set either url or file, not both/);
    const neither = await failuresOf({ url: undefined });
    expect(neither.map((f) => f.property)).toEqual(["url", "file"]);
    expect(neither[0]!.reason).toMatch(/set url .* or file/);

    expect(await failuresOf({ loader: "web" })).toEqual([
      {
        property: "loader",
        reason:
          '"web" is not available: only the Files loader exists (the service\'s create always fixes the Files loader and no route chooses another). Use "files" or leave loader out.',
      },
    ]);
    expect(await failuresOf({ url: undefined, file: engineAsset({ path: "missing.txt" }, "") }, byFile)).toEqual([
      { property: "file", reason: `file missing.txt does not exist (looked for ${join(bed.dir, "missing.txt")})` },
    ]);
    expect((await failuresOf({ url: undefined, file: { [SIG_KEY]: ASSET_SIG, hash: sha256("") } }, byText))[0]).toEqual({
      property: "file",
      reason: "the StringAsset is empty: there is nothing to upload and index",
    });
    expect(
      (await failuresOf({ url: undefined, file: { [SIG_KEY]: ASSET_SIG, uri: "https://example.com/a.txt" } }, byText))[0]!.reason,
    ).toMatch(/RemoteAsset is not supported: pass its address as url/);
    expect(await failuresOf({ waitForIndexing: true })).toEqual([
      { property: "waitForIndexing", reason: expect.stringMatching(/only starts with process: true/) },
    ]);

    const many = await failuresOf({
      context: "handbook",
      url: "ftp://example.com/x",
      splitterConfig: { chunkSize: 0, size: 3 },
      loaderConfig: [{ value: 1 }],
      colour: "blue",
    });
    expect(many.map((f) => f.property).sort()).toEqual([
      "colour",
      "context",
      "loaderConfig.0.name",
      "splitterConfig",
      "splitterConfig.chunkSize",
      "url",
    ]);
    const missing = await bed.host.check(urnOf(byUrl), {}, { __provider: byUrl.inputs.__provider, url: signedUrl });
    expect(missing.failures).toEqual([{ property: "context", reason: "context is required" }]);
  });

  it("lets unknown values through check and diff during preview", async () => {
    const result = await bed.host.check(urnOf(byFile), {}, { ...byFile.inputs, file: UNKNOWN, context: UNKNOWN });
    expect(result.failures).toEqual([]);
    const diff = await bed.host.diff(
      urnOf(byFile),
      "x",
      { context: handbook, file: { path: "policies.txt", hash: sha256(POLICIES) }, loader: "files" },
      result.inputs,
    );
    expect(diff).toEqual({ changes: "some", replaces: ["context", "file"], deleteBeforeReplace: false });
  });
});
