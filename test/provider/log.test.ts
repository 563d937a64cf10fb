/**
 * src/provider/log.ts: the provider's lines go to the host's engine log when there is one (here a sink standing in
 * for it), at their severity and under the resource whose call is under way, and through the SDK's log otherwise;
 * and no code that runs in a provider process writes through `pulumi.log` itself, which has no engine in the dynamic
 * provider's host. The lines on the real CLI: test/pulumi-cli/dynamic-provider-log.test.ts.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LogSeverity } from "../../src/plugin/engine-log";
import { logProviderTo, providerLog } from "../../src/provider/log";
import { asResourceCall } from "../../src/provider/request-log";

const URN = "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/gms:App::support";

describe("providerLog", () => {
  afterEach(() => {
    logProviderTo(undefined);
    vi.restoreAllMocks();
  });

  it("sends each line to the host's engine log at its severity, under the resource of the call under way", async () => {
    const lines: [LogSeverity, string, string | undefined][] = [];
    logProviderTo(async (severity, line, urn) => void lines.push([severity, line, urn]));
    const sdk = vi.spyOn(pulumi.log, "info");
    await providerLog.info("waiting");
    await asResourceCall(URN, () => providerLog.warn("possible orphan"));
    expect(lines).toEqual([
      ["info", "waiting", undefined],
      ["warning", "possible orphan", URN],
    ]);
    expect(sdk).not.toHaveBeenCalled();
  });

  it("without a host's engine, writes through the SDK's log, naming the resource of the call under way", async () => {
    const warn = vi.spyOn(pulumi.log, "warn").mockResolvedValue(undefined);
    const info = vi.spyOn(pulumi.log, "info").mockRejectedValue(new Error("the engine is shutting down"));
    await asResourceCall(URN, () => providerLog.warn("possible orphan"));
    // A line the engine refuses fails nothing.
    await expect(providerLog.info("waiting")).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    const [message, resource] = warn.mock.calls[0]!;
    expect(message).toBe("possible orphan");
    expect(await (resource!.urn as unknown as { promise(): Promise<string> }).promise()).toBe(URN);
    expect(info.mock.calls).toEqual([["waiting", undefined]]);
  });
});

describe("code that runs in a provider process", () => {
  it("logs through src/provider/log.ts, never through pulumi.log", () => {
    const root = join(__dirname, "../../src");
    const files = [
      "provider/provider.ts",
      "provider/rest.ts",
      "provider/undo-create.ts",
      ...readdirSync(join(root, "client")).map((file) => `client/${file}`),
      ...readdirSync(join(root, "resources")).map((file) => `resources/${file}`),
    ].filter((file) => file.endsWith(".ts"));
    const offending = files.filter((file) => /\bpulumi\.log\./.test(readFileSync(join(root, file), "utf8")));
    expect(offending).toEqual([]);
  });
});
