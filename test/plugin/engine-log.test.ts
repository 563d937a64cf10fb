/**
 * src/plugin/engine-log.ts: the engine's address among a provider's arguments, the dynamic provider's host told from
 * any other process, and lines sent to an engine's Log service in order, each at its severity and with its resource's
 * URN. The lines
 * on the real CLI: test/plugin/debug-log.test.ts (the plugin) and test/pulumi-cli/dynamic-debug-log.test.ts (the
 * dynamic provider's host).
 */
import { describe, expect, it, vi } from "vitest";
import { dynamicHostEngine, engineAddressIn, engineDebugLog, engineLog, isDynamicProviderHost } from "../../src/plugin/engine-log";
import { startFakeEngine } from "./plugin-process";

describe("engineAddressIn", () => {
  it("is the last argument after the engine's flags, and none when the arguments end in a flag or a flag's value", () => {
    expect(engineAddressIn(["127.0.0.1:4242"])).toBe("127.0.0.1:4242");
    expect(engineAddressIn(["--logtostderr", "-v=9", "--tracing", "tcp://collector", "127.0.0.1:4242"])).toBe("127.0.0.1:4242");
    expect(engineAddressIn([])).toBeUndefined();
    expect(engineAddressIn(["--logtostderr", "-v=9"])).toBeUndefined();
    expect(engineAddressIn(["--tracing", "tcp://collector"])).toBeUndefined();
  });
});

describe("isDynamicProviderHost", () => {
  it("is the process whose main module is @pulumi/pulumi's dynamic-provider host, and no other", () => {
    expect(isDynamicProviderHost(require.resolve("@pulumi/pulumi/cmd/dynamic-provider"))).toBe(true);
    expect(isDynamicProviderHost("C:\\work\\node_modules\\@pulumi\\pulumi\\cmd\\dynamic-provider\\index.js")).toBe(true);
    expect(isDynamicProviderHost(require.resolve("@pulumi/pulumi"))).toBe(false);
    expect(isDynamicProviderHost("/work/program/index.js")).toBe(false);
    expect(isDynamicProviderHost(undefined)).toBe(false);
    // This test's own process.
    expect(isDynamicProviderHost()).toBe(false);
  });
});

describe("dynamicHostEngine", () => {
  it("is none outside the dynamic provider's host, whatever the arguments", () => {
    expect(dynamicHostEngine(["127.0.0.1:4242"])).toBeUndefined();
  });
});

describe("engineLog", () => {
  it("sends each line at its severity, in order, resolving once the engine has taken it", async () => {
    const engine = await startFakeEngine();
    try {
      const log = engineLog(engine.address);
      const urn = "urn:pulumi:dev::proj::gms:index:App::support";
      void log("info", "waiting", undefined);
      void log("warning", "possible orphan", urn);
      void log("error", "failed", urn);
      await log("debug", "request", undefined);
      expect(engine.logs).toEqual([
        { severity: "info", message: "waiting", urn: "" },
        { severity: "warning", message: "possible orphan", urn },
        { severity: "error", message: "failed", urn },
        { severity: "debug", message: "request", urn: "" },
      ]);
    } finally {
      engine.close();
    }
  });
});

describe("engineDebugLog", () => {
  it("sends each line to the engine's log at debug level, in order, under its resource's URN (none when unknown)", async () => {
    const engine = await startFakeEngine();
    try {
      const log = engineDebugLog(engine.address);
      const urn = "urn:pulumi:dev::proj::gms:index:App::support";
      for (let n = 1; n <= 20; n++) void log(`line ${n}`, n % 2 ? urn : undefined);
      await vi.waitFor(() => expect(engine.logs).toHaveLength(20));
      expect(engine.logs).toEqual(
        Array.from({ length: 20 }, (_, i) => ({ severity: "debug", message: `line ${i + 1}`, urn: (i + 1) % 2 ? urn : "" })),
      );
    } finally {
      engine.close();
    }
  });

  it("drops a line the engine refuses, failing nothing, and sends the next ones", async () => {
    const engine = await startFakeEngine(1);
    try {
      const log = engineDebugLog(engine.address);
      void log("refused", undefined);
      void log("kept", undefined);
      await vi.waitFor(() => expect(engine.logs).toEqual([{ severity: "debug", message: "kept", urn: "" }]));
    } finally {
      engine.close();
    }
  });
});
