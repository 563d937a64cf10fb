import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Store, buildServer, loadFixtures, startEmulator } from "../../src/emulator";
import { STORED_MEDIA_TYPE_HEADER } from "../../src/emulator/store/files";
import { ACME_KEY, MISSING_GUID, TEST_FIXTURES, createTestEmulator } from "./harness";

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
const base64 = (bytes: Buffer | string) => Buffer.from(bytes).toString("base64");
// In-process (inject) the server listens nowhere: URLs fall back to http://127.0.0.1, whatever the Host header says.
const URL_SHAPE = /^http:\/\/127\.0\.0\.1\/v1\/files\/([0-9a-f-]{36})\?expires=(\d+)&signature=([0-9a-f]{64})$/;

describe("files routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeEach(() => {
    emulator = createTestEmulator();
  });
  afterEach(() => emulator.close());

  const upload = async (data: string) => {
    const reply = await emulator.call("POST", "/v1/files/upload", { data });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.url as string;
  };

  /** Fetches a signed URL without any Authorization header, as a loader would. */
  const fetchSigned = async (url: string) => {
    const { pathname, search } = new URL(url);
    return emulator.server.inject({ method: "GET", url: pathname + search });
  };

  it("answers a signed URL on the emulator's own origin that expires after 10 minutes", async () => {
    const before = Math.floor(Date.now() / 1000);
    const reply = await emulator.call("POST", "/v1/files/upload", { data: base64(PNG) });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(["url"]);
    const [, , expires] = URL_SHAPE.exec(reply.body.url)!;
    expect(Number(expires)).toBeGreaterThanOrEqual(before + 600);
    expect(Number(expires)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 600);

    // A forged Host header does not move the URL elsewhere.
    const forged = await emulator.call("POST", "/v1/files/upload/", { data: base64(PNG) }, { headers: { host: "evil.example:4010" } });
    expect(forged.body.url).toMatch(URL_SHAPE);
  });

  it("serves the bytes without a bearer key, with the stored Content-Type, as an attachment", async () => {
    const url = await upload(base64(PNG));
    const served = await fetchSigned(url);
    expect(served.statusCode).toBe(200);
    expect(served.headers["content-type"]).toBe("image/png");
    expect(served.headers["x-content-type-options"]).toBe("nosniff");
    expect(served.headers["content-disposition"]).toBe(`attachment; filename="${URL_SHAPE.exec(url)![1]}.png"`);
    expect(served.headers["content-security-policy"]).toBe("default-src 'none'; sandbox");
    expect(served.headers[STORED_MEDIA_TYPE_HEADER]).toBe("image/png");
    expect(served.rawPayload.equals(PNG)).toBe(true);
    const guid = URL_SHAPE.exec(url)![1]!;
    expect(emulator.store.db.get("SELECT typeof(content) AS kind FROM files WHERE guid = ?", guid)).toEqual({ kind: "blob" });
  });

  it("takes the MIME type from a data URL", async () => {
    const pdfAsText = await fetchSigned(await upload(`data:text/plain;charset=utf-8;base64,${base64("%PDF-1.7 not really")}`));
    expect(pdfAsText.headers["content-type"]).toBe("text/plain;charset=utf-8");
    expect(pdfAsText.body).toBe("%PDF-1.7 not really");
    const jpeg = await fetchSigned(await upload(`data:image/jpeg;base64,${base64(PNG)}`));
    expect(jpeg.headers["content-type"]).toBe("image/jpeg");
    // A data URL without a media type falls back to sniffing.
    expect((await fetchSigned(await upload(`data:;base64,${base64("%PDF-1.4")}`))).headers["content-type"]).toBe("application/pdf");
  });

  it.each([
    ["image/png", PNG],
    ["image/jpeg", Buffer.from("ffd8ffe000104a464946", "hex")],
    ["image/gif", Buffer.from("GIF89a\x01\x00\x01\x00", "latin1")],
    ["image/webp", Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x24, 0, 0, 0]), Buffer.from("WEBPVP8 ")])],
    ["application/pdf", Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3", "latin1")],
    ["application/json", Buffer.from('{"hello": ["world"]}')],
    ["text/plain", Buffer.from("héllo wörld, plain text")],
    // A RIFF container that is not WEBP (here WAVE) is not an image type the sniffer knows: PNG by default.
    ["image/png", Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x24, 0, 0, 0]), Buffer.from("WAVEfmt ")])],
    ["image/png", Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff])],
    ["image/png", Buffer.from([0xc3, 0x28, 0x41])],
  ])("sniffs %s from the bytes", async (mime, bytes) => {
    const served = await fetchSigned(await upload(base64(bytes)));
    expect(served.statusCode).toBe(200);
    expect(served.headers["content-type"]).toBe(mime);
    expect(served.rawPayload.equals(bytes)).toBe(true);
  });

  it("accepts whitespace, missing padding and the URL-safe alphabet", async () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x00, 0x10]);
    const urlSafe = bytes.toString("base64url");
    expect(urlSafe).toMatch(/[-_]/);
    for (const data of [urlSafe, `${base64(bytes).slice(0, 4)}\n${base64(bytes).slice(4)}`]) {
      expect((await fetchSigned(await upload(data))).rawPayload.equals(bytes)).toBe(true);
    }
  });

  it.each([
    ["text/html", "<script>alert(document.cookie)</script>"],
    ["text/html;charset=utf-8", "<html><body onload=alert(1)>"],
    ["image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'],
    ["application/xhtml+xml", "<html xmlns='http://www.w3.org/1999/xhtml'><script>alert(1)</script></html>"],
    ["text/javascript", "alert(1)"],
    ["application/octet-stream", "bytes"],
  ])("serves an active type (%s) as an octet-stream download, keeping the stored type in its own header", async (type, content) => {
    const url = await upload(`data:${type};base64,${base64(content)}`);
    const served = await fetchSigned(url);
    expect(served.statusCode).toBe(200);
    expect(served.headers["content-type"]).toBe("application/octet-stream");
    expect(served.headers["x-content-type-options"]).toBe("nosniff");
    expect(served.headers["content-disposition"]).toBe(`attachment; filename="${URL_SHAPE.exec(url)![1]}.bin"`);
    expect(served.headers["content-security-policy"]).toBe("default-src 'none'; sandbox");
    expect(served.headers[STORED_MEDIA_TYPE_HEADER]).toBe(type);
    expect(served.body).toBe(content);
  });

  it.each([
    ["text/plain", "txt"],
    ["TEXT/Plain; charset=utf-8", "txt"],
    ["text/csv", "csv"],
    ["text/markdown;charset=utf-8", "md"],
    ["application/json", "json"],
    ["application/pdf", "pdf"],
    ["image/png", "png"],
    ["image/jpeg", "jpg"],
    ["image/gif", "gif"],
    ["image/webp", "webp"],
  ])("keeps an inert type (%s) and offers it as .%s", async (type, extension) => {
    const url = await upload(`data:${type};base64,${base64("content")}`);
    const served = await fetchSigned(url);
    expect(served.headers["content-type"]).toBe(type);
    expect(served.headers["content-disposition"]).toBe(`attachment; filename="${URL_SHAPE.exec(url)![1]}.${extension}"`);
    expect(served.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("answers 400 for a declared media type with control characters or bad syntax, and stores nothing", async () => {
    for (const [type, detail] of [
      ["text/plain;a=b\r\nX-Injected: 1", "Data URL media type contains control characters"],
      ["text/html\r\nSet-Cookie: session=stolen", "Data URL media type contains control characters"],
      ["text/plain\n", "Data URL media type contains control characters"],
      ["text/plain;\tcharset=utf-8", "Data URL media type contains control characters"],
      ["text/plain\u0000", "Data URL media type contains control characters"],
      ["text/plain\u007f", "Data URL media type contains control characters"],
      ["text", "Data URL has an invalid media type"],
      ["text/", "Data URL has an invalid media type"],
      ["/plain", "Data URL has an invalid media type"],
      ["text/plain/extra", "Data URL has an invalid media type"],
      ["text/plain;charset", "Data URL has an invalid media type"],
      ["text/plain;charset=", "Data URL has an invalid media type"],
      ['text/plain;charset="unterminated', "Data URL has an invalid media type"],
      ["text/pläin", "Data URL has an invalid media type"],
      ["text/plain;name=a b", "Data URL has an invalid media type"],
      [`text/${"x".repeat(300)}`, "Data URL media type is longer than 255 characters"],
    ]) {
      const reply = await emulator.call("POST", "/v1/files/upload", { data: `data:${type};base64,aGk=` });
      expect(reply.status, JSON.stringify(type)).toBe(400);
      expect(reply.body, JSON.stringify(type)).toEqual({ detail });
    }
    expect(emulator.store.db.get("SELECT count(*) AS n FROM files")).toEqual({ n: 0 });
    // Parameters with tokens or quoted strings stay acceptable.
    for (const type of [
      "text/plain; charset=utf-8",
      'text/plain;charset="utf-8";format=flowed',
      "application/vnd.api+json",
      'text/plain;x="a\\"b"',
    ]) {
      const served = await fetchSigned(await upload(`data:${type};base64,aGk=`));
      expect(served.statusCode, type).toBe(200);
      expect(served.headers[STORED_MEDIA_TYPE_HEADER], type).toBe(type);
    }
  });

  it("serves a file whose stored type is malformed (stored before uploads were validated) as octet-stream", async () => {
    const url = await upload(`data:text/plain;base64,${base64("legacy")}`);
    const guid = URL_SHAPE.exec(url)![1]!;
    emulator.store.db.run("UPDATE files SET mime_type = ? WHERE guid = ?", "text/plain;a=b\r\nX-Injected: 1", guid);
    const served = await fetchSigned(url);
    expect(served.statusCode).toBe(200);
    expect(served.headers["content-type"]).toBe("application/octet-stream");
    expect(served.headers["x-injected"]).toBeUndefined();
    expect(served.headers[STORED_MEDIA_TYPE_HEADER]).toBeUndefined();
    expect(served.body).toBe("legacy");
  });

  it("answers 400 for invalid base64, empty payloads and malformed bodies", async () => {
    for (const [data, detail] of [
      ["not base64!", "Invalid base64 data"],
      ["abcde", "Invalid base64 data"],
      ["ab=c", "Invalid base64 data"],
      ["", "File is empty"],
      ["   ", "File is empty"],
      ["data:image/png;base64,", "File is empty"],
      ["data:image/png;base64,@@@", "Invalid base64 data"],
      ["data:text/plain,hello", "Data URL must be base64-encoded"],
      ["data:not a type;base64,aGk=", "Data URL has an invalid media type"],
    ]) {
      const reply = await emulator.call("POST", "/v1/files/upload", { data });
      expect(reply.status, data).toBe(400);
      expect(reply.body, data).toEqual({ detail });
    }
    const missing = await emulator.call("POST", "/v1/files/upload", {});
    expect(missing.status).toBe(400);
    expect(missing.body.detail[0].loc).toEqual(["body", "data"]);
    expect((await emulator.call("POST", "/v1/files/upload", { data: 42 })).status).toBe(400);
    expect(emulator.store.db.get("SELECT count(*) AS n FROM files")).toEqual({ n: 0 });
  });

  it("needs a bearer key to upload", async () => {
    const reply = await emulator.call("POST", "/v1/files/upload", { data: base64(PNG) }, { apiKey: null });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ detail: "Not authenticated" });
  });

  it("answers 403 for a wrong, missing or tampered signature", async () => {
    const url = new URL(await upload(base64(PNG)));
    const guid = url.pathname.split("/").pop()!;
    const expires = url.searchParams.get("expires")!;
    const signature = url.searchParams.get("signature")!;
    const flipped = (signature[0] === "0" ? "1" : "0") + signature.slice(1);
    for (const query of [
      `?expires=${expires}&signature=${flipped}`,
      `?expires=${expires}`,
      "",
      `?expires=${Number(expires) + 3600}&signature=${signature}`,
      `?expires=${expires}&signature=${signature.slice(0, 10)}`,
    ]) {
      const reply = await emulator.call("GET", `/v1/files/${guid}${query}`, undefined, { apiKey: null });
      expect(reply.status, query).toBe(403);
      expect(reply.body).toEqual({ detail: "Signature does not match" });
    }
    // The signature binds the file: it does not open another one.
    const other = new URL(await upload(base64(PNG)));
    const swapped = await emulator.call("GET", `${other.pathname}?expires=${expires}&signature=${signature}`, undefined, { apiKey: null });
    expect(swapped.status).toBe(403);
  });

  it("answers 403 once the URL has expired, and serves it until then", async () => {
    const caller = emulator.store.workspaces.authenticate(ACME_KEY)!;
    const file = emulator.store.files.upload(caller, base64(PNG));
    const at = (minutesAgo: number) => {
      const { expires, signature } = emulator.store.files.sign(file.guid, new Date(Date.now() - minutesAgo * 60_000));
      return `/v1/files/${file.guid}?expires=${expires}&signature=${signature}`;
    };
    const expired = await emulator.call("GET", at(11), undefined, { apiKey: null });
    expect(expired.status).toBe(403);
    expect(expired.body).toEqual({ detail: "Request has expired" });
    expect((await emulator.call("GET", at(9), undefined, { apiKey: null })).status).toBe(200);
  });

  it("answers 404 for a validly signed unknown file and 400 for a malformed GUID", async () => {
    const { expires, signature } = emulator.store.files.sign(MISSING_GUID);
    const unknown = await emulator.call("GET", `/v1/files/${MISSING_GUID}?expires=${expires}&signature=${signature}`, undefined, {
      apiKey: null,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: "File not found" });
    expect((await emulator.call("GET", "/v1/files/not-a-uuid?expires=1&signature=ab", undefined, { apiKey: null })).status).toBe(400);
  });
});

describe("signed file URLs across a restart", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gms-files-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keep working, because the signing secret is persisted in the database", async () => {
    const path = join(dir, "gms.db");
    const first = createTestEmulator(TEST_FIXTURES, path);
    const { body } = await first.call("POST", "/v1/files/upload", { data: base64("persisted") });
    await first.close();

    const second = createTestEmulator(TEST_FIXTURES, path);
    try {
      const { pathname, search } = new URL(body.url);
      const served = await second.call("GET", pathname + search, undefined, { apiKey: null });
      expect(served.status).toBe(200);
      expect(served.body).toBe("persisted");
    } finally {
      await second.close();
    }

    // A different database signs with a different secret.
    const fresh = createTestEmulator();
    try {
      const { pathname, search } = new URL(body.url);
      expect((await fresh.call("GET", pathname + search, undefined, { apiKey: null })).status).toBe(403);
    } finally {
      await fresh.close();
    }
  });
});

describe("signed file URLs issued before streams were signed", () => {
  it("keep working: a file signs the same text with the same stored key as before (HMAC-SHA256 of `<guid>\\n<expires>`)", async () => {
    const emulator = createTestEmulator();
    try {
      const caller = emulator.store.workspaces.authenticate(ACME_KEY)!;
      const file = emulator.store.files.upload(caller, base64("older URL"));
      const { secret } = emulator.store.db.get<{ secret: Uint8Array }>("SELECT secret FROM file_signing_key WHERE id = 1")!;
      const expires = Math.floor(Date.now() / 1000) + 60;
      const signature = createHmac("sha256", secret).update(`${file.guid}\n${expires}`).digest("hex");
      expect(emulator.store.files.sign(file.guid, new Date((expires - 600) * 1000))).toEqual({ expires, signature });
      const served = await emulator.call("GET", `/v1/files/${file.guid}?expires=${expires}&signature=${signature}`, undefined, {
        apiKey: null,
      });
      expect(served).toMatchObject({ status: 200, body: "older URL" });
    } finally {
      await emulator.close();
    }
  });
});

describe("signed file URLs' origin", () => {
  const upload = async (server: ReturnType<typeof buildServer>, host?: string) => {
    const reply = await server.inject({
      method: "POST",
      url: "/v1/files/upload",
      headers: { authorization: `Bearer ${ACME_KEY}`, ...(host ? { host } : {}) },
      payload: { data: base64("hello") },
    });
    expect(reply.statusCode).toBe(200);
    return JSON.parse(reply.body).url as string;
  };

  it("start with the configured publicUrl (path prefix kept, trailing slash dropped), whatever the Host header", async () => {
    const store = new Store(":memory:");
    loadFixtures(store, TEST_FIXTURES);
    const server = buildServer(store, { publicUrl: "https://gms.example.test/base/" });
    try {
      for (const host of [undefined, "evil.example", "evil.example:4010"]) {
        expect(await upload(server, host)).toMatch(
          /^https:\/\/gms\.example\.test\/base\/v1\/files\/[0-9a-f-]{36}\?expires=\d+&signature=[0-9a-f]{64}$/,
        );
      }
    } finally {
      await server.close();
      store.close();
    }
  });

  it("refuse a publicUrl that is not an absolute http(s) URL without query, fragment or credentials", () => {
    const store = new Store(":memory:");
    try {
      for (const publicUrl of [
        "gms.example.test",
        "ftp://gms.example.test",
        "http://gms.example.test/?a=1",
        "http://gms.example.test/#x",
        "http://user:pw@gms.example.test",
      ]) {
        expect(() => buildServer(store, { publicUrl }), publicUrl).toThrow(/publicUrl must be/);
      }
    } finally {
      store.close();
    }
  });

  it("name the address the emulator listens on when no publicUrl is given, even with a forged Host header", async () => {
    const emulator = await startEmulator({ fixtures: TEST_FIXTURES, port: 0 });
    try {
      const origin = new URL(emulator.url).origin;
      expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // Over a real socket, with a Host header naming somewhere else (fetch would not let a test set it).
      const body = JSON.stringify({ data: base64("hello") });
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(
          `${emulator.url}/files/upload`,
          {
            method: "POST",
            headers: { host: "evil.example:4010", authorization: `Bearer ${ACME_KEY}`, "content-type": "application/json" },
          },
          (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => (text += chunk));
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
          },
        );
        request.on("error", reject);
        request.end(body);
      });
      expect(answer.status).toBe(200);
      const url = JSON.parse(answer.body).url as string;
      expect(url.startsWith(`${origin}/v1/files/`)).toBe(true);
      expect((await fetch(url)).status).toBe(200);
    } finally {
      await emulator.close();
    }
  });
});
