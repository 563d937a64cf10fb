import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Fixtures, Store, loadFixtures } from "../../src/emulator";
import { FixturesError } from "../../src/emulator/fixtures";
import { pathOf, readStream } from "./generation-stream";
import { MISSING_GUID, OTHER_KEY, createTestEmulator, withApps } from "./harness";

const notFound = (detail: string) => ({ status: 404, body: { detail } });
const badRequest = (detail: string) => ({ status: 400, body: { detail } });

const GREET_PROMPT = "Hello {{ name }}, welcome to {{place}}. Bye {{name}}.";

/** The shared fixtures plus Actions of Support with several variables, none, and other environments. */
const RUN_FIXTURES = withApps({
  Support: (app) => ({
    ...app,
    actions: [
      ...app.actions!,
      { name: "Greet", prompt: GREET_PROMPT, model: "gpt-4o", environments: ["Production", "Staging"] },
      { name: "Poem", prompt: "Write a poem about the sea" },
      { name: "Beta", prompt: "Beta: {{text}}", environments: ["Staging", "eu-canary"] },
      { name: "Echo", prompt: "{{text}}" },
    ],
  }),
});

const feedbackUrl = (dataGuid: string) => `http://127.0.0.1/v1/feedback/${dataGuid}`;
/** The Data GUID a feedback URL names. */
const dataOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);
const guids = (body: { data: { guid: string }[] }) => body.data.map((data) => data.guid);

describe("action run routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let support: string;
  let summarize: string;
  let greet: string;
  let poem: string;
  let beta: string;
  let echo: string;
  const run = (body: Record<string, unknown>, apiKey?: string) => emulator.call("POST", "/v1/actions/", body, { apiKey });
  const dataCount = async () => (await emulator.call("GET", "/v1/data")).body.total_count;
  beforeEach(async () => {
    emulator = createTestEmulator(RUN_FIXTURES);
    support = await emulator.appGuid("Support");
    summarize = await emulator.actionGuid("Support", "Summarize");
    greet = await emulator.actionGuid("Support", "Greet");
    poem = await emulator.actionGuid("Support", "Poem");
    beta = await emulator.actionGuid("Support", "Beta");
    echo = await emulator.actionGuid("Support", "Echo");
  });
  afterEach(() => emulator.close());

  it("answers the prompt rendered with the input and logs it as the Data record the feedback URL names", async () => {
    const reply = await run({ action: summarize, input: { text: "a long ticket" } });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["data_guid", "feedback_url", "msg", "streaming"]);
    expect(reply.body).toEqual({
      msg: "Summarize: a long ticket",
      feedback_url: expect.any(String),
      data_guid: expect.any(String),
      streaming: false,
    });
    const dataGuid = dataOf(reply.body.feedback_url);
    expect(reply.body.feedback_url).toBe(feedbackUrl(dataGuid));
    expect(reply.body.data_guid).toBe(dataGuid);

    const data = await emulator.call("GET", `/v1/data/${dataGuid}`);
    expect(data.status).toBe(200);
    expect(data.body).toMatchObject({
      guid: dataGuid,
      input: { text: "a long ticket" },
      output: "Summarize: a long ticket",
      full_prompt_sent: "Summarize: a long ticket",
      model: "gpt-4o-mini",
      model_provider: null,
      num_input_tokens: 4,
      num_output_tokens: 4,
      latency: 0,
      metadata: { environment: "Production" },
    });
    expect(guids((await emulator.call("GET", "/v1/data")).body)).toEqual([dataGuid]);
    expect(guids((await emulator.call("GET", `/v1/apps/${support}/data`)).body)).toEqual([dataGuid]);

    // Without the trailing slash too; every run logs a record of its own, listed newest first.
    const again = await emulator.call("POST", "/v1/actions", { action: summarize, input: { text: "a long ticket" } });
    expect(again.status).toBe(200);
    expect(again.body.msg).toBe("Summarize: a long ticket");
    expect(guids((await emulator.call("GET", "/v1/data")).body)).toEqual([dataOf(again.body.feedback_url), dataGuid]);
  });

  it("fills every placeholder, repeated or spaced, and renders numbers and booleans as text", async () => {
    expect((await run({ action: greet, input: { name: "Ada", place: "Paris" } })).body.msg).toBe("Hello Ada, welcome to Paris. Bye Ada.");
    expect((await run({ action: greet, input: { name: 7, place: true } })).body.msg).toBe("Hello 7, welcome to true. Bye 7.");
  });

  it("takes a string input when the prompt has no variables: the prompt, then the input on a line of its own", async () => {
    const reply = await run({ action: poem, input: "with waves" });
    expect(reply.body.msg).toBe("Write a poem about the sea\nwith waves");
    expect((await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`)).body.input).toBe("with waves");
    expect((await run({ action: poem, input: "" })).body.msg).toBe("Write a poem about the sea");
  });

  it("takes a string input as the value of the prompt's one variable, logs it as sent and caches it as that variable's value", async () => {
    const reply = await run({ action: summarize, input: "a jammed printer" });
    expect(reply).toMatchObject({ status: 200, body: { msg: "Summarize: a jammed printer" } });
    const data = (await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`)).body;
    expect(data).toMatchObject({
      input: "a jammed printer",
      output: "Summarize: a jammed printer",
      full_prompt_sent: "Summarize: a jammed printer",
    });
    expect((await run({ action: echo, input: "" })).body.msg).toBe("");
    // The string and the object giving the one variable the same value are the same input to the cache.
    const hit = await run({ action: summarize, input: { text: "a jammed printer" }, cache: true });
    expect(hit.body.feedback_url).toBe(reply.body.feedback_url);
    expect((await run({ action: summarize, input: "a jammed printer", cache: true })).body.feedback_url).toBe(reply.body.feedback_url);
    expect(await dataCount()).toBe(2);
  });

  it("answers 400 naming the variables when the input does not fit the Action's variables, and logs nothing", async () => {
    for (const [action, input, detail] of [
      // A string fills one variable only: with several, which one it is for is ambiguous.
      [greet, "just text", "Input must be an object with a value for each variable: name, place"],
      [greet, "", "Input must be an object with a value for each variable: name, place"],
      [poem, { verse: "one" }, "Input must be a string: the prompt has no variables"],
      [greet, { name: "Ada" }, "Missing input variable: place"],
      [greet, {}, "Missing input variables: name, place"],
      [summarize, { text: "a", tone: "dry" }, "Unknown input variable: tone"],
      [summarize, { text: "a", x: "1", y: "2" }, "Unknown input variables: x, y"],
      [summarize, { text: { nested: "no" } }, "Input variable text must be a string, number or boolean"],
      [summarize, { text: null }, "Input variable text must be a string, number or boolean"],
      [summarize, { text: ["a"] }, "Input variable text must be a string, number or boolean"],
    ] as const) {
      expect(await run({ action, input }), JSON.stringify(input)).toMatchObject(badRequest(detail));
    }
    expect(await dataCount()).toBe(0);
  });

  it("refuses malformed bodies with FastAPI-style 400s", async () => {
    const body = { action: summarize, input: { text: "x" } };
    for (const [bad, loc] of [
      [{ input: { text: "x" } }, ["body", "action"]],
      [{ action: summarize }, ["body", "input"]],
      [{ ...body, action: "nope" }, ["body", "action"]],
      [{ ...body, input: 42 }, ["body", "input"]],
      [{ ...body, input: ["a"] }, ["body", "input"]],
      [{ ...body, streaming: "yes" }, ["body", "streaming"]],
      [{ ...body, async_mode: 1 }, ["body", "async_mode"]],
      [{ ...body, cache: "true" }, ["body", "cache"]],
      [{ ...body, session: "nope" }, ["body", "session"]],
      [{ ...body, experiment: "nope" }, ["body", "experiment"]],
      [{ ...body, metadata_filter: "lang=en" }, ["body", "metadata_filter"]],
      [{ ...body, environment: "" }, ["body", "environment"]],
      [{ ...body, environment: 3 }, ["body", "environment"]],
      [{ ...body, extUserId: "" }, ["body", "extUserId"]],
      [{ ...body, messages: [{ content: "hi" }] }, ["body", "messages", "0", "role"]],
      [{ ...body, messages: [{ role: "user", content: "hi", files: ["not an image!"] }] }, ["body", "messages", "0", "files", "0"]],
      [{ ...body, streaming: true, async_mode: true }, ["body", "async_mode"]],
    ] as const) {
      const reply = await run(bad);
      expect(reply.status, JSON.stringify(bad)).toBe(400);
      expect(reply.body.detail[0].loc, JSON.stringify(bad)).toEqual(loc);
    }
    expect((await run({ ...body, streaming: true, async_mode: true })).body.detail[0].msg).toBe(
      "streaming and async_mode cannot both be true",
    );
    expect(await dataCount()).toBe(0);
  });

  it("answers 404 for a missing Action, one of another workspace or of a deleted App, a missing Session or Experiment", async () => {
    expect(await run({ action: MISSING_GUID, input: "x" })).toMatchObject(notFound("Action not found"));
    const theirs = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    expect(await run({ action: theirs, input: { text: "x" } })).toMatchObject(notFound("Action not found"));
    expect((await run({ action: theirs, input: { text: "x" } }, OTHER_KEY)).body.msg).toBe("x");
    expect(await run({ action: summarize, input: { text: "x" }, session: MISSING_GUID })).toMatchObject(notFound("Session not found"));
    expect(await run({ action: summarize, input: { text: "x" }, experiment: MISSING_GUID })).toMatchObject(
      notFound("Experiment not found"),
    );
    const sales = await emulator.appGuid("Sales");
    const pitch = await emulator.actionGuid("Sales", "Pitch");
    expect((await run({ action: pitch, input: { product: "tea" } })).body.msg).toBe("Pitch tea");
    await emulator.call("DELETE", `/v1/apps/${sales}`);
    expect(await run({ action: pitch, input: { product: "tea" } })).toMatchObject(notFound("Action not found"));
    expect(await dataCount()).toBe(1);
    expect(await emulator.call("POST", "/v1/actions", { action: summarize, input: { text: "x" } }, { apiKey: null })).toMatchObject({
      status: 401,
      body: { detail: "Not authenticated" },
    });
  });

  it("streams: a signed streaming URL whose server-sent tokens join into the text, and a feedback URL for the logged record", async () => {
    const input = { name: "Ada Lovelace", place: "the   Analytical\nEngine" };
    const expected = "Hello Ada Lovelace, welcome to the   Analytical\nEngine. Bye Ada Lovelace.";
    const reply = await run({ action: greet, input, streaming: true });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["data_guid", "feedback_url", "msg", "streaming", "streaming_url"]);
    expect(reply.body).toMatchObject({ msg: "", streaming: true, data_guid: dataOf(reply.body.feedback_url) });
    expect(reply.body.streaming_url).toMatch(
      /^http:\/\/127\.0\.0\.1\/v1\/generations\/[0-9a-f-]{36}\/stream\?expires=\d+&signature=[0-9a-f]{64}$/,
    );
    // Without an API key (readStream sends none): the signature is the authority.
    const tokens = await readStream(emulator.call, reply.body.streaming_url);
    expect(tokens.join("")).toBe(expected);
    expect(tokens).toEqual([
      "Hello ",
      "Ada ",
      "Lovelace, ",
      "welcome ",
      "to ",
      "the   ",
      "Analytical\n",
      "Engine. ",
      "Bye ",
      "Ada ",
      "Lovelace.",
    ]);
    // The stream can be read again, and the record logs the same text with one output token per streamed token.
    expect(await readStream(emulator.call, reply.body.streaming_url)).toEqual(tokens);
    const data = await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`);
    expect(data.body).toMatchObject({ output: expected, num_output_tokens: tokens.length });

    // Blanks that open the text are a token of their own; an empty text streams no token.
    const streamOf = async (text: string) =>
      readStream(emulator.call, (await run({ action: echo, input: { text }, streaming: true })).body.streaming_url);
    expect(await streamOf("  x  y")).toEqual(["  ", "x  ", "y"]);
    expect(await streamOf("")).toEqual([]);
  });

  it("runs asynchronously: a Generation GUID and the result URL of GET /generations/{guid}, which answers the output", async () => {
    const reply = await run({ action: summarize, input: { text: "later" }, async_mode: true });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["data_guid", "feedback_url", "generation_guid", "msg", "result_url", "streaming"]);
    expect(reply.body).toMatchObject({ msg: "", streaming: false, data_guid: dataOf(reply.body.feedback_url) });
    expect(reply.body.result_url).toBe(`http://127.0.0.1/v1/generations/${reply.body.generation_guid}`);
    const generation = await emulator.call("GET", pathOf(reply.body.result_url));
    expect(generation.status).toBe(200);
    expect(generation.body).toEqual({
      guid: reply.body.generation_guid,
      status: "SUCCESS",
      msg: "Summarize: later",
      feedback_url: reply.body.feedback_url,
      action: summarize,
      experiment: null,
      variant: null,
    });
    expect((await emulator.call("GET", `/v1/generations/${reply.body.generation_guid}/`)).body).toEqual(generation.body);
    expect((await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`)).body.output).toBe("Summarize: later");
    // The stream route serves any generation whose stream URL is signed; an asynchronous run hands none out.
    const { expires, signature } = emulator.store.generations.signStream(reply.body.generation_guid);
    const signed = `http://127.0.0.1/v1/generations/${reply.body.generation_guid}/stream?expires=${expires}&signature=${signature}`;
    expect((await readStream(emulator.call, signed)).join("")).toBe("Summarize: later");
  });

  it("answers 404 for a generation that is missing or of another workspace, 400 for a malformed GUID", async () => {
    const { body } = await run({ action: summarize, input: { text: "mine" }, async_mode: true });
    expect(await emulator.call("GET", `/v1/generations/${body.generation_guid}`, undefined, { apiKey: OTHER_KEY })).toMatchObject(
      notFound("Generation not found"),
    );
    expect(await emulator.call("GET", `/v1/generations/${MISSING_GUID}`)).toMatchObject(notFound("Generation not found"));
    // A validly signed stream URL of a generation that does not exist.
    const { expires, signature } = emulator.store.generations.signStream(MISSING_GUID);
    const missingStream = `/v1/generations/${MISSING_GUID}/stream?expires=${expires}&signature=${signature}`;
    expect(await emulator.call("GET", missingStream, undefined, { apiKey: null })).toMatchObject(notFound("Generation not found"));
    // The stream is public (no key needed), so its GUID is checked before anything else.
    for (const [path, apiKey] of [
      ["/v1/generations/nope", undefined],
      ["/v1/generations/nope/stream?expires=1&signature=ab", null],
    ] as const) {
      const reply = await emulator.call("GET", path, undefined, { apiKey });
      expect(reply.status, path).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["path", "guid"]);
    }
    expect((await emulator.call("GET", `/v1/generations/${body.generation_guid}`, undefined, { apiKey: null })).status).toBe(401);
  });

  describe("the streaming URL: a capability, signed like a file URL", () => {
    /** A streaming run's URL, split into its path and the two query parts. */
    async function streamingUrl(): Promise<{ path: string; expires: string; signature: string }> {
      const url = new URL((await run({ action: summarize, input: { text: "signed" }, streaming: true })).body.streaming_url);
      return { path: url.pathname, expires: url.searchParams.get("expires")!, signature: url.searchParams.get("signature")! };
    }
    const open = (url: string) => emulator.call("GET", url, undefined, { apiKey: null });

    it("opens with its signature and no API key, and with any key too, but not with a key alone", async () => {
      const { path, expires, signature } = await streamingUrl();
      expect((await readStream(emulator.call, `http://127.0.0.1${path}?expires=${expires}&signature=${signature}`)).join("")).toBe(
        "Summarize: signed",
      );
      const withKey = await emulator.call("GET", `${path}?expires=${expires}&signature=${signature}`, undefined, { apiKey: OTHER_KEY });
      expect(withKey.status).toBe(200);
      expect(await emulator.call("GET", path)).toMatchObject({ status: 403, body: { detail: "Signature does not match" } });
    });

    it("answers 403 for a wrong, missing, tampered or another generation's signature", async () => {
      const { path, expires, signature } = await streamingUrl();
      const flipped = (signature[0] === "0" ? "1" : "0") + signature.slice(1);
      for (const query of [
        `?expires=${expires}&signature=${flipped}`,
        `?expires=${expires}`,
        `?signature=${signature}`,
        "",
        `?expires=${Number(expires) + 3600}&signature=${signature}`,
        `?expires=${expires}&signature=${signature.slice(0, 10)}`,
      ]) {
        expect(await open(`${path}${query}`), query).toMatchObject({ status: 403, body: { detail: "Signature does not match" } });
      }
      const other = await streamingUrl();
      expect(await open(`${other.path}?expires=${expires}&signature=${signature}`)).toMatchObject({
        status: 403,
        body: { detail: "Signature does not match" },
      });
    });

    it("answers 403 once expired (10 minutes), and serves it until then", async () => {
      const { generation_guid: guid } = (await run({ action: summarize, input: { text: "t" }, async_mode: true })).body;
      const signedAt = (minutesAgo: number) => {
        const { expires, signature } = emulator.store.generations.signStream(guid, new Date(Date.now() - minutesAgo * 60_000));
        return `/v1/generations/${guid}/stream?expires=${expires}&signature=${signature}`;
      };
      expect(await open(signedAt(11))).toMatchObject({ status: 403, body: { detail: "Request has expired" } });
      expect((await open(signedAt(9))).status).toBe(200);
    });

    it("does not open with a file's signature for the same GUID, nor a file with a stream's", async () => {
      const { generation_guid: guid } = (await run({ action: summarize, input: { text: "t" }, async_mode: true })).body;
      const file = emulator.store.files.sign(guid);
      expect(await open(`/v1/generations/${guid}/stream?expires=${file.expires}&signature=${file.signature}`)).toMatchObject({
        status: 403,
        body: { detail: "Signature does not match" },
      });

      const uploaded = new URL(
        (await emulator.call("POST", "/v1/files/upload", { data: Buffer.from("text").toString("base64") })).body.url,
      );
      const fileGuid = uploaded.pathname.split("/").pop()!;
      expect((await open(`${uploaded.pathname}${uploaded.search}`)).status).toBe(200);
      const stream = emulator.store.generations.signStream(fileGuid);
      expect(await open(`/v1/files/${fileGuid}?expires=${stream.expires}&signature=${stream.signature}`)).toMatchObject({
        status: 403,
        body: { detail: "Signature does not match" },
      });
    });
  });

  it("answers the newest cached generation of the same Action and input with cache, logging nothing new", async () => {
    const first = await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true });
    expect(first.status).toBe(200);
    expect(await dataCount()).toBe(1);
    // Identical input, whatever the order of its variables: the same text and record.
    const hit = await run({ action: greet, input: { place: "Paris", name: "Ada" }, cache: true });
    expect(hit.body).toEqual(first.body);
    expect(await dataCount()).toBe(1);

    // Without cache a run generates anew; a later cache hit answers that newest one.
    const fresh = await run({ action: greet, input: { name: "Ada", place: "Paris" } });
    expect(fresh.body.feedback_url).not.toBe(first.body.feedback_url);
    expect(await dataCount()).toBe(2);
    expect((await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true })).body).toEqual(fresh.body);

    // A different input, or another Action with the same input, is no hit.
    expect((await run({ action: greet, input: { name: "Ada", place: "Rome" }, cache: true })).body.msg).toBe(
      "Hello Ada, welcome to Rome. Bye Ada.",
    );
    await run({ action: summarize, input: { text: "same" }, cache: true });
    await run({ action: beta, input: { text: "same" }, cache: true, environment: "Staging" });
    expect(await dataCount()).toBe(5);

    // In the other modes the hit hands out the cached generation's stream or GUID.
    const streamed = await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true, streaming: true });
    expect(streamed.body.feedback_url).toBe(fresh.body.feedback_url);
    expect((await readStream(emulator.call, streamed.body.streaming_url)).join("")).toBe("Hello Ada, welcome to Paris. Bye Ada.");
    const later = await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true, async_mode: true });
    expect(later.body.feedback_url).toBe(fresh.body.feedback_url);
    expect(new URL(streamed.body.streaming_url).pathname).toBe(`/v1/generations/${later.body.generation_guid}/stream`);
    expect(await dataCount()).toBe(5);

    // A generation whose Data record was deleted is no longer served: the older one is, then a new one.
    await emulator.call("DELETE", `/v1/data/${dataOf(fresh.body.feedback_url)}`);
    expect((await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true })).body).toEqual(first.body);
    await emulator.call("DELETE", `/v1/data/${dataOf(first.body.feedback_url)}`);
    const regenerated = await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true });
    expect(regenerated.body.msg).toBe("Hello Ada, welcome to Paris. Bye Ada.");
    expect([first.body.feedback_url, fresh.body.feedback_url]).not.toContain(regenerated.body.feedback_url);
    expect(await dataCount()).toBe(4);

    // Checks still apply to a hit: an unknown Session is 404, an environment the Action is not deployed to 400.
    expect(await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true, session: MISSING_GUID })).toMatchObject(
      notFound("Session not found"),
    );
    expect(await run({ action: greet, input: { name: "Ada", place: "Paris" }, cache: true, environment: "Preview" })).toMatchObject(
      badRequest("Action is not deployed to Preview"),
    );
  });

  it("runs in Production unless told otherwise, and only where the Action is deployed", async () => {
    const dataMetadata = async (reply: { body: { feedback_url: string } }) =>
      (await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`)).body.metadata;
    expect(await dataMetadata(await run({ action: greet, input: { name: "a", place: "b" } }))).toEqual({ environment: "Production" });
    const staging = await run({ action: greet, input: { name: "a", place: "b" }, environment: "Staging" });
    expect(staging.status).toBe(200);
    expect(await dataMetadata(staging)).toEqual({ environment: "Staging" });
    expect((await run({ action: beta, input: { text: "t" }, environment: "eu-canary" })).body.msg).toBe("Beta: t");

    for (const [action, input, environment, detail] of [
      [summarize, { text: "t" }, "Staging", "Action is not deployed to Staging"],
      [greet, { name: "a", place: "b" }, "Preview", "Action is not deployed to Preview"],
      [greet, { name: "a", place: "b" }, "production", "Action is not deployed to production"],
      [beta, { text: "t" }, undefined, "Action is not deployed to Production"],
    ] as const) {
      expect(await run({ action, input, environment }), `${environment}`).toMatchObject(badRequest(detail));
    }
    expect(await dataCount()).toBe(3);
  });

  it("records the external user ID in the Data record's metadata", async () => {
    const reply = await run({ action: summarize, input: { text: "t" }, extUserId: "customer-42" });
    expect((await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`)).body.metadata).toEqual({
      environment: "Production",
      extUserId: "customer-42",
    });
    const anonymous = await run({ action: summarize, input: { text: "t" }, extUserId: null });
    expect((await emulator.call("GET", `/v1/data/${dataOf(anonymous.body.feedback_url)}`)).body.metadata).toEqual({
      environment: "Production",
    });
  });

  it("sends messages after the prompt (full_prompt_sent) without changing the text, and accepts a metadata filter", async () => {
    const messages = [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: "And this picture?",
        files: ["https://example.com/cat.png", "iVBORw0KGgo=", "data:image/png;base64,iVBORw0KGgo="],
      },
    ];
    const reply = await run({ action: summarize, input: { text: "t" }, messages, metadata_filter: { lang: "en" } });
    expect(reply.status).toBe(200);
    expect(reply.body.msg).toBe("Summarize: t");
    const data = await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`);
    expect(data.body).toMatchObject({
      full_prompt_sent: "Summarize: t\nsystem: Be brief.\nuser: And this picture?",
      num_input_tokens: 9,
      num_output_tokens: 2,
    });
    expect((await run({ action: summarize, input: { text: "t" }, messages: null, metadata_filter: null })).status).toBe(200);
  });

  it("rejects fixtures whose Action lists no environment", () => {
    const store = new Store();
    const fixtures: Fixtures = {
      workspaces: [
        { name: "X", slug: "x", apiKey: "gms_fixture_key", apps: [{ name: "A", actions: [{ name: "B", prompt: "p", environments: [] }] }] },
      ],
    };
    expect(() => loadFixtures(store, fixtures)).toThrow(FixturesError);
    expect(() => loadFixtures(store, fixtures)).toThrow(/environments/);
    store.close();
  });
});
