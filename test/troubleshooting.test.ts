/**
 * docs/troubleshooting.md quotes the provider's own messages: each quote the page holds is matched here against the
 * message the code makes, so that a change of wording on either side fails until the other follows. In a quote,
 * `...` stands for any text and `N` for a number; the page leaves out the backticks the messages put around commands.
 * (`the stack is currently locked` is the Pulumi CLI's own text, not the provider's, and is not checked here.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AuthenticationError, LimitExceededError } from "../src/client";
import { Session } from "../src/provider/session";
import { failure, failureText, goneMessage } from "../src/provider/errors";
import { notIndexedMessage } from "../src/resources/context-source";

const page = readFileSync(join(__dirname, "..", "docs", "troubleshooting.md"), "utf8").replace(/\s*\n\s*/g, " ");
const request = { method: "POST", path: "/apps" };

/** A quote of the page as a pattern: `...` any text, `N` a number, backticks dropped. */
const pattern = (quote: string) =>
  new RegExp(
    quote
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace(/\\\.\\\.\\\./g, ".*")
      .replace(/\bN\b/g, "[\\d.]+"),
  );
const unquoted = (message: string) => message.replace(/`/g, "");

describe("docs/troubleshooting.md quotes the provider's messages as the code makes them", () => {
  afterEach(() => vi.unstubAllEnvs());

  const quotes: [string, () => string][] = [
    ["the service answered 401 ...", () => failureText(new AuthenticationError({ ...request, status: 401, detail: "Invalid API key" }))],
    [
      'Cannot create App "Support": the service answered 429 ...',
      () =>
        failure('Cannot create App "Support"', new LimitExceededError({ ...request, status: 429, detail: "App limit reached" })).message,
    ],
    [
      "... no longer exists in the workspace (deleted outside Pulumi?): run pulumi refresh",
      () => goneMessage("App", "0b6f3a52-1c1e-4c59-9a4f-2f5f0c1d9e11"),
    ],
    [
      'processing ... had not finished after N s (indexing_status still "..." ...)',
      () => notIndexedMessage('Context Source "handbook"', "30.0", "pending", 12, "Raise waitForIndexing.timeoutSeconds"),
    ],
    [
      "No service URL: set pulumi config set gms:baseUrl https://.../v1, or GMS_BASE_URL, or the resource's connection.baseUrl",
      () => {
        vi.stubEnv("GMS_BASE_URL", undefined);
        return new Session().missingSettings(undefined)[0]!;
      },
    ],
    [
      "No API key: ...",
      () => {
        vi.stubEnv("GMS_API_KEY", undefined);
        return new Session().missingSettings(undefined).at(-1)!;
      },
    ],
  ];

  it.each(quotes)("`%s`", (quote, make) => {
    expect(page, "the page holds the quote").toContain(quote);
    expect(unquoted(make())).toMatch(pattern(quote));
  });

  it("a quote that no longer matches the message fails", () => {
    expect(unquoted(goneMessage("App", "x"))).not.toMatch(pattern("... was deleted outside Pulumi: run pulumi refresh"));
  });
});
