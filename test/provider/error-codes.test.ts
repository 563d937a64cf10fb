/**
 * Every error the provider, the kinds and the workspace code raise for a user (but a MayExistError, which means the
 * object may exist, and keeps what is known of it) is a ProviderError with a stable
 * `code` (docs/provider.md, "Errors"): a failed request keeps the client's code, the provider's own conditions
 * have theirs. The source holds no plain `new Error(` in those folders, and the codes reach a caller through the
 * provider itself, in process, against the emulator.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { codeOf, failure, notInWorkspace, ProviderError } from "../../src/provider/errors";
import { resourceProvider } from "../../src/provider/provider";
import { Session } from "../../src/provider/session";
import { appKind } from "../../src/resources/app";

const API_KEY = "gms_error_codes_key_77a1";
const ROOT = join(__dirname, "..", "..", "src");

const sourcesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourcesUnder(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );

describe("provider error codes", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "Codes", apiKey: API_KEY }] });
  });
  afterAll(() => emulator?.close());

  it("leaves no plain `new Error(` in the provider, the kinds or the workspace code", () => {
    const plain = ["provider", "resources", "workspace"]
      .flatMap((folder) => sourcesUnder(join(ROOT, folder)))
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .map((line, index) => ({ where: `${file.slice(ROOT.length + 1)}:${index + 1}`, line }))
          .filter(({ line }) => /\bnew Error\(/.test(line) && !line.trim().startsWith("*") && !line.trim().startsWith("//")),
      )
      .map(({ where }) => where);
    expect(plain).toEqual([]);
  });

  it("keeps the client's code for a failed request, and names its own conditions", () => {
    const notFound = new NotFoundError({ method: "GET", path: "/apps/x", status: 404, detail: "App not found" });
    const wrapped = failure('Cannot read App "x"', notFound);
    expect(wrapped).toBeInstanceOf(ProviderError);
    expect(wrapped).toMatchObject({ code: "not_found", cause: notFound });
    expect(codeOf(new Error("anything"))).toBe("failed");
    expect(notInWorkspace("Cannot create Workflow", "App 1", "set app to an App of the workspace", notFound)).toMatchObject({
      code: "not_in_workspace",
    });
  });

  it("carries the code through the provider: adopting an object that does not exist is adopt_not_found", async () => {
    const connection = { baseUrl: emulator.url, apiKey: API_KEY };
    const provider = resourceProvider(appKind, new Session());
    const adopt = "0b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b";
    const failed = await provider.create({ name: "Ghost", description: null, adopt, connection }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ProviderError);
    expect(failed).toMatchObject({ code: "adopt_not_found", message: `Cannot adopt App ${adopt}: no such object in the workspace` });
    const refused = await provider
      .create({ name: "Refused", description: null, connection: { ...connection, apiKey: "gms_wrong_key_0000" } })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "authentication", message: expect.stringMatching(/^Cannot create App "Refused": /) });
  });
});
