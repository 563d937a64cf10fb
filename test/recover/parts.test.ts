/**
 * recover's parts without a CLI: reading the two exports (secrets revealed in memory only, pending operations sorted
 * out), where each create's lookup goes, the export it imports, the lock files and the window, and the command's
 * flags.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { recordedExport, refreshTargets } from "../../src/recover/apply";
import {
  backendFolder,
  holdersInRefusal,
  isBucketBackend,
  type LockHolder,
  lockedSince,
  locksFromRenameRefusal,
  OTHER_MACHINE_MARGIN_MS,
  readLocks,
} from "../../src/recover/lock";
import { renderReport } from "../../src/recover/render";
import { lockBlocker, lockReport, reportOf, unrecordedRun } from "../../src/recover/report";
import { serviceOf } from "../../src/recover/service";
import { readStack } from "../../src/recover/stack";
import { landedBy, sinceOnService } from "../../src/recover/window";
import { SKEW_MARGIN_MS } from "../../src/provider/window";
import { runRecover } from "./harness";

const SIG = "4dabf18193072939515e22adb298388d";
const SECRET = "1b47061264138c4ac30d75fd1eb44270";
const sealed = (name: string) => ({ [SIG]: SECRET, ciphertext: `v1:${name}` });
const revealed = (value: unknown) => ({ [SIG]: SECRET, plaintext: JSON.stringify(value) });
const STACK_URN = "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev";
const NATIVE_PROVIDER = "urn:pulumi:dev::p::pulumi:providers:gms::default_0_1_0";
const DYNAMIC_PROVIDER = "urn:pulumi:dev::p::pulumi:providers:pulumi-nodejs::default";
const urn = (type: string, name: string) => `urn:pulumi:dev::p::${type}::${name}`;

/** An export of a stack with an App recorded, and pending: a native App (key in its connection), a dynamic Workflow, a RandomId, a provider, an update. */
function exportsOf(secret: (name: string, value: unknown) => unknown) {
  const deployment = {
    manifest: { time: "2026-11-28T12:00:30.5Z", version: "v3.274.1" },
    resources: [
      { urn: STACK_URN, type: "pulumi:pulumi:Stack", custom: false },
      {
        urn: NATIVE_PROVIDER,
        type: "pulumi:providers:gms",
        custom: true,
        id: "p1",
        inputs: { baseUrl: "http://native.test/v1", apiKey: secret("k", "native-key"), requestDeadlineMs: "5000" },
      },
      {
        urn: DYNAMIC_PROVIDER,
        type: "pulumi:providers:pulumi-nodejs",
        custom: true,
        id: "p2",
        inputs: { "gms:baseUrl": "http://dynamic.test/v1", "gms:apiKey": secret("d", "dynamic-key") },
      },
      {
        urn: urn("gms:index:App", "kept"),
        type: "gms:index:App",
        custom: true,
        id: "app-kept",
        provider: `${NATIVE_PROVIDER}::p1`,
        inputs: { name: "kept" },
      },
      {
        urn: urn("gms:index:App", "changing"),
        type: "gms:index:App",
        custom: true,
        id: "app-changing",
        provider: `${NATIVE_PROVIDER}::p1`,
        inputs: { name: "changing" },
      },
    ],
    pending_operations: [
      {
        type: "creating",
        resource: {
          urn: urn("gms:index:App", "a"),
          type: "gms:index:App",
          custom: true,
          parent: STACK_URN,
          provider: `${NATIVE_PROVIDER}::p1`,
          inputs: { name: "a", description: "d", connection: secret("c", { baseUrl: "http://own.test/v1", apiKey: "own-key" }) },
        },
      },
      {
        type: "creating",
        resource: {
          urn: urn("pulumi-nodejs:dynamic/gms:Workflow", "w"),
          type: "pulumi-nodejs:dynamic/gms:Workflow",
          custom: true,
          provider: `${DYNAMIC_PROVIDER}::p2`,
          inputs: { __provider: "exports.handler = ...", name: "w", app: "app-kept" },
        },
      },
      { type: "creating", resource: { urn: urn("random:index:RandomId", "r"), type: "random:index:RandomId", custom: true, inputs: {} } },
      { type: "creating", resource: { urn: urn("pulumi:providers:aws", "x"), type: "pulumi:providers:aws", custom: true, inputs: {} } },
      { type: "updating", resource: { urn: urn("gms:index:App", "changing"), type: "gms:index:App", custom: true, inputs: {} } },
    ],
  };
  return JSON.stringify({ version: 3, deployment });
}

const SEALED = exportsOf((name) => sealed(name));
const REVEALED = exportsOf((_name, value) => revealed(value));

describe("readStack", () => {
  const stack = readStack("dev", REVEALED, SEALED);

  it("sorts the pending operations out: gms creates to look up, another package's creates, the rest", () => {
    expect(stack.pendingCreates.map((create) => [create.urn, create.kind, create.heldAs])).toEqual([
      [urn("gms:index:App", "a"), "App", undefined],
      [urn("pulumi-nodejs:dynamic/gms:Workflow", "w"), "Workflow", undefined],
    ]);
    expect(stack.foreignCreates).toEqual([{ urn: urn("random:index:RandomId", "r"), type: "random:index:RandomId" }]);
    expect(stack.otherOperations.map((operation) => [operation.operation, operation.urn, operation.inState])).toEqual([
      ["creating", urn("pulumi:providers:aws", "x"), false],
      ["updating", urn("gms:index:App", "changing"), true],
    ]);
    expect(stack.heldIds).toEqual(new Set(["p1", "p2", "app-kept", "app-changing"]));
    expect(stack.lastWriteAt).toBe(Date.parse("2026-11-28T12:00:30.500Z"));
  });

  it("reveals secrets in memory (the lookups' inputs and the providers'), collects them for blanking, and keeps the sealed export", () => {
    expect(stack.pendingCreates[0]!.inputs.connection).toEqual({ baseUrl: "http://own.test/v1", apiKey: "own-key" });
    expect(stack.providerOf(`${NATIVE_PROVIDER}::p1`)?.inputs.apiKey).toBe("native-key");
    expect(stack.secrets.sort()).toEqual(["dynamic-key", "http://own.test/v1", "native-key", "own-key"]);
    expect(JSON.stringify(stack.sealed)).not.toContain("own-key");
  });

  it("refuses two exports of different states, and an export whose secrets stayed sealed", () => {
    const other = JSON.parse(REVEALED) as { deployment: { pending_operations: unknown[] } };
    other.deployment.pending_operations.pop();
    expect(() => readStack("dev", JSON.stringify(other), SEALED)).toThrow(/changed between two exports/);
    expect(() => readStack("dev", SEALED, SEALED)).toThrow(/left a secret sealed/);
  });

  it("notes a pending create whose URN the stack holds already", () => {
    const held = JSON.parse(REVEALED) as { deployment: { resources: unknown[] } };
    held.deployment.resources.push({ urn: urn("gms:index:App", "a"), type: "gms:index:App", custom: true, id: "app-a2" });
    const heldSealed = JSON.parse(SEALED) as { deployment: { resources: unknown[] } };
    heldSealed.deployment.resources.push({ urn: urn("gms:index:App", "a"), type: "gms:index:App", custom: true, id: "app-a2" });
    expect(readStack("dev", JSON.stringify(held), JSON.stringify(heldSealed)).pendingCreates[0]!.heldAs).toBe("app-a2");
  });
});

describe("serviceOf", () => {
  const stack = readStack("dev", REVEALED, SEALED);
  const [native, dynamic] = stack.pendingCreates as [(typeof stack.pendingCreates)[0], (typeof stack.pendingCreates)[0]];

  it("takes the resource's connection first, then its provider's configuration (native inputs, or the stack's gms: keys), then the environment", () => {
    expect(serviceOf(native, stack, {})).toEqual({
      baseUrl: "http://own.test/v1",
      apiKey: "own-key",
      requestDeadlineMs: 5000,
      maxRetries: undefined,
      maxRequestsPerSecond: undefined,
    });
    expect(serviceOf(dynamic, stack, { GMS_REQUEST_DEADLINE_MS: "7000", GMS_MAX_REQUESTS_PER_SECOND: "2.5" })).toEqual({
      baseUrl: "http://dynamic.test/v1",
      apiKey: "dynamic-key",
      requestDeadlineMs: 7000,
      maxRetries: undefined,
      maxRequestsPerSecond: 2.5,
    });
    const bare = { ...dynamic, provider: undefined };
    expect(serviceOf(bare, stack, { GMS_BASE_URL: "http://env.test/v1/", GMS_API_KEY: "env-key" })).toMatchObject({
      baseUrl: "http://env.test/v1",
      apiKey: "env-key",
    });
    expect(serviceOf(bare, stack, { GMS_BASE_URL: "http://env.test/v1" })).toEqual({ missing: expect.stringContaining("no API key") });
    expect(serviceOf(bare, stack, {})).toEqual({ missing: expect.stringContaining("no service URL") });
  });
});

describe("the export recover imports", () => {
  const stack = readStack("dev", REVEALED, SEALED);
  const plans = [
    { urn: urn("gms:index:App", "a"), outcome: "recorded", id: "app-a" },
    { urn: urn("pulumi-nodejs:dynamic/gms:Workflow", "w"), outcome: "superseded", id: "w-orphan" },
    { urn: urn("random:index:RandomId", "r"), outcome: "recorded", id: "r-1" },
  ];

  it("adds each recorded create's resource, sealed as the export had it, with its id and its inputs as outputs; no pending operation", () => {
    const document = recordedExport(stack.sealed, plans);
    const added = document.deployment.resources!.slice(-3);
    expect(added.map((resource) => [resource.urn, resource.id, resource.delete])).toEqual([
      [urn("gms:index:App", "a"), "app-a", undefined],
      [urn("pulumi-nodejs:dynamic/gms:Workflow", "w"), "w-orphan", true],
      [urn("random:index:RandomId", "r"), "r-1", undefined],
    ]);
    expect(added[0]).toMatchObject({ parent: STACK_URN, provider: `${NATIVE_PROVIDER}::p1` });
    expect(added[0]!.outputs).toEqual(added[0]!.inputs);
    expect(added[0]!.inputs!.connection).toEqual(sealed("c"));
    // A superseded create's object keeps what its delete needs: its provider and, for a dynamic resource, `__provider`.
    expect(added[1]!.outputs).toMatchObject({ __provider: "exports.handler = ..." });
    expect(document.deployment.pending_operations).toEqual([]);
    expect(document.deployment.resources!.slice(0, -3)).toEqual(stack.sealed.deployment.resources);
  });

  it("refreshes what it recorded and the stack's resources that other pending operations were changing", () => {
    expect(refreshTargets(stack, plans)).toEqual([
      urn("gms:index:App", "a"),
      urn("random:index:RandomId", "r"),
      urn("gms:index:App", "changing"),
    ]);
  });
});

describe("the lock files", () => {
  const root = mkdtempSync(join(tmpdir(), "gms-recover-locks-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dead = spawnSync("true").pid!;

  it("are read from a file backend's folder (project layout or legacy), each holder checked", () => {
    const project = join(root, ".pulumi", "locks", "organization", "p", "dev");
    const legacy = join(root, ".pulumi", "locks", "dev");
    mkdirSync(project, { recursive: true });
    mkdirSync(legacy, { recursive: true });
    const lock = (dir: string, file: string, pid: number, host: string, timestamp: string) =>
      writeFileSync(join(dir, file), JSON.stringify({ pid, username: "me", hostname: host, timestamp }));
    lock(project, "a.json", dead, hostname(), "2026-11-28T12:00:05Z");
    lock(project, "b.json", process.pid, hostname(), "2026-11-28T12:00:01.25+01:00");
    lock(legacy, "c.json", dead, "elsewhere-host", "2026-11-28T12:00:09Z");
    writeFileSync(join(project, "a.json.attrs"), "{}");
    const locks = readLocks(`file://${root}?no_tmp_dir=true`, "p", "organization/p/dev", "/");
    expect(locks.readable && locks.holders.map((holder) => [holder.pid, holder.status])).toEqual([
      [dead, "gone"],
      [process.pid, "running"],
      [dead, "elsewhere"],
    ]);
    expect(lockedSince(locks)).toBe(Date.parse("2026-11-28T11:00:01.250Z"));
    // No project (the legacy layout): the legacy folder's only.
    const legacyOnly = readLocks(`file://${root}`, undefined, "dev", "/");
    expect(legacyOnly.readable && legacyOnly.holders.map((holder) => holder.lock)).toEqual([join(legacy, "c.json")]);
    expect(readLocks(`file://${root}`, "p", "other", "/")).toEqual({ readable: true, holders: [] });
    expect(readLocks("https://api.pulumi.com", "p", "dev", "/")).toEqual({
      readable: false,
      reason: expect.stringContaining("file backend"),
    });
  });

  it("are read from a refusal of the CLI on a bucket: each once, the URL's query left out, each holder checked", () => {
    const lines = [
      "error: the stack is currently locked by 2 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.",
      "  s3://b/.pulumi/locks/organization/p/dev/a.json?endpoint=http%3A%2F%2F127.0.0.1%3A9&region=x: " +
        `created by me@${hostname()} (pid ${dead}) at 2026-11-29T00:21:17Z`,
      "  s3://b/.pulumi/locks/organization/p/dev/b.json: created by ci@runner-7 (pid 42) at 2026-11-29T00:20:00Z",
    ];
    // The Automation API's error repeats what the CLI said.
    const holders = holdersInRefusal([...lines, ...lines].join("\n"));
    expect(holders.map((holder) => [holder.lock, holder.username, holder.hostname, holder.pid, holder.timestamp, holder.status])).toEqual([
      ["s3://b/.pulumi/locks/organization/p/dev/a.json", "me", hostname(), dead, "2026-11-29T00:21:17Z", "gone"],
      ["s3://b/.pulumi/locks/organization/p/dev/b.json", "ci", "runner-7", 42, "2026-11-29T00:20:00Z", "elsewhere"],
    ]);
    expect(holdersInRefusal(`  s3://b/c.json: created by me@${hostname()} (pid ${process.pid}) at 2026-11-29T00:21:17Z`)[0]?.status).toBe(
      "running",
    );
    expect(holdersInRefusal("error: [409] Conflict: Another update is currently in progress.")).toEqual([]);

    // What the CLI says to `pulumi stack rename <stack>` (its own name): locked, or not (the name is taken), or neither.
    expect(locksFromRenameRefusal(lines.join("\n"))).toEqual({ readable: true, holders });
    expect(locksFromRenameRefusal("error: a stack named dev already exists")).toEqual({ readable: true, holders: [] });
    expect(locksFromRenameRefusal("error: could not reach the bucket\n")).toEqual({
      readable: false,
      reason: "the CLI did not say whether the stack is locked (error: could not reach the bucket)",
    });
    expect(["s3://b/p", "gs://b", "azblob://c", "file:///x", "https://api.pulumi.com"].map(isBucketBackend)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it("are released when every holder is gone, or when the caller vouches for them (--release-lock) and none still runs", () => {
    const holder = (status: LockHolder["status"], timestamp: string): LockHolder => ({
      lock: `${status}.json`,
      pid: 7,
      username: "me",
      hostname: status === "elsewhere" ? "runner-7" : hostname(),
      timestamp,
      status,
    });
    const gone = holder("gone", "2026-11-29T11:00:00Z");
    const elsewhere = holder("elsewhere", "2026-11-29T10:00:00Z");
    const running = holder("running", "2026-11-29T12:00:00Z");
    const read = (...holders: LockHolder[]) => ({ readable: true as const, holders });
    expect(lockReport(read(gone)).release).toBe(true);
    expect(lockReport(read(gone, elsewhere)).release).toBe(false);
    expect(lockReport(read(gone, elsewhere), true).release).toBe(true);
    expect(lockReport(read(running, elsewhere), true).release).toBe(false);
    expect(lockReport(read(), true).release).toBe(false);
    expect(lockReport({ readable: false, reason: "a bucket" }, true)).toEqual({
      readable: false,
      reason: "a bucket",
      holders: [],
      release: true,
    });
    expect(lockReport({ readable: false, reason: "a bucket" }).release).toBe(false);

    expect(lockBlocker(lockReport(read(elsewhere)), "dev")).toMatch(/another machine.*runner-7.*--release-lock/);
    expect(lockBlocker(lockReport(read(elsewhere), true), "dev")).toBeUndefined();
    expect(lockBlocker(lockReport(read(running, elsewhere), true), "dev")).toMatch(/still going/);
    // Another machine's lock is on a clock recover cannot relate to the service's: not the update's start.
    expect(lockedSince(read(elsewhere, gone))).toBe(Date.parse("2026-11-29T11:00:00Z"));
    expect(lockedSince(read(elsewhere))).toBeUndefined();
    // Unless the caller vouched for it: then it counts, as beginning earlier than it says by the margin for its clock.
    expect(lockedSince(read(elsewhere, gone), true)).toBe(Date.parse("2026-11-29T10:00:00Z") - OTHER_MACHINE_MARGIN_MS);

    const report = (lock: ReturnType<typeof lockReport>) =>
      reportOf({ stack: "dev", lock, since: undefined, pendingCreates: [], foreignCreates: [], otherOperations: [] });
    expect(report(lockReport(read(running))).underway).toBe(true);
    expect(report(lockReport(read(elsewhere))).underway).toBe(true);
    expect(report(lockReport(read(elsewhere), true))).toMatchObject({ underway: false, blockers: [] });
    expect(report(lockReport(read(gone))).underway).toBe(false);
  });

  it("warn when the killed run wrote no checkpoint after it began (PULUMI_SKIP_CHECKPOINTS=true, or it changed nothing)", () => {
    const began = Date.parse("2026-12-07T10:00:00Z");
    const [warning] = unrecordedRun("dev", began, Date.parse("2026-12-07T09:59:59Z"));
    expect(warning).toContain("the killed run wrote no checkpoint after it began at 2026-12-07T10:00:00.000Z");
    expect(warning).toContain("(the checkpoint was last written at 2026-12-07T09:59:59.000Z)");
    expect(warning).toContain("PULUMI_SKIP_CHECKPOINTS=true");
    expect(warning).toContain("`pulumi-gms discover --stack dev`");
    expect(unrecordedRun("dev", began, undefined)[0]).toContain("(the checkpoint was never written)");
    // A run that wrote the checkpoint since it began (its pending operations are there), or no known start: no warning.
    expect(unrecordedRun("dev", began, began)).toEqual([]);
    expect(unrecordedRun("dev", began, began + 1)).toEqual([]);
    expect(unrecordedRun("dev", undefined, began)).toEqual([]);

    const gone = {
      lock: "a.json",
      pid: 7,
      username: "me",
      hostname: hostname(),
      timestamp: "2026-12-07T10:00:00Z",
      status: "gone" as const,
    };
    const report = (holders: LockHolder[]) =>
      reportOf({
        stack: "dev",
        lock: lockReport({ readable: true, holders }),
        since: began,
        lastWriteAt: began - 1000,
        pendingCreates: [],
        foreignCreates: [],
        otherOperations: [],
      });
    expect(report([gone]).warnings).toHaveLength(1);
    // No lock: no killed run to speak of.
    expect(report([]).warnings).toEqual([]);
    expect(report([gone]).next).toEqual([]);
    expect(report([]).next).toEqual(["pulumi up --stack dev"]);
    const rendered = renderReport(report([gone]));
    expect(rendered).toMatch(
      /\nWarning: the killed run wrote no checkpoint after it began .*\.\nWould release the lock \(pulumi cancel\)\./,
    );
    expect(rendered).not.toContain("Next:");
  });

  it("sit in the backend's folder as the CLI resolves it", () => {
    expect(backendFolder("file://~/state", "/project")).toBe(join(homedir(), "state"));
    expect(backendFolder("file://./state", "/project")).toBe("/project/state");
    expect(backendFolder("file:///abs/state?no_tmp_dir=true", "/project")).toBe("/abs/state");
    expect(backendFolder("s3://bucket", "/project")).toBeUndefined();
  });
});

describe("the window", () => {
  const clock = (skew: number) => ({ serverNow: () => 1_000_000 + skew, requestDeadlineMs: 3000 });

  it("shifts the update's start onto the service's clock by the measured skew, less the margin", () => {
    expect(sinceOnService(500_000, clock(-300_000), 1_000_000)).toBe(200_000 - SKEW_MARGIN_MS);
    expect(sinceOnService(500_000, clock(60_000), 1_000_000)).toBe(560_000 - SKEW_MARGIN_MS);
    expect(sinceOnService(undefined, clock(0), 1_000_000)).toBeUndefined();
  });

  it("waits out the service's deadline from the run's last write before dropping", () => {
    expect(landedBy(700_000, clock(0))).toBe(703_000 + SKEW_MARGIN_MS);
    expect(landedBy(undefined, clock(0))).toBeUndefined();
  });
});

describe("the command's flags", () => {
  const run = (...argv: string[]) => runRecover(argv, { env: { PATH: "" }, cwd: tmpdir() });

  it("--help prints the usage; a missing --stack, an argument or a bad --choose is a usage error (exit 2)", async () => {
    const help = await run("--help");
    expect(help).toMatchObject({ code: 0, err: "" });
    expect(help.out).toMatch(/^usage: pulumi-gms recover --stack NAME/);
    for (const [argv, message] of [
      [[], "--stack NAME is required"],
      [["--stack", "dev", "extra"], "takes no arguments"],
      [["--stack", "dev", "--choose", "guid-only"], "--choose takes URN=GUID"],
      [
        ["--stack", "dev", "--choose", "urn:pulumi:dev::p::t::a=g1", "--choose", "urn:pulumi:dev::p::t::a=g2"],
        "names urn:pulumi:dev::p::t::a twice",
      ],
      [["--stack", "dev", "--api-key", "k"], "Unknown option '--api-key'"],
    ] as const) {
      const result = await run(...argv);
      expect(result.code, argv.join(" ")).toBe(2);
      expect(result.err).toContain(message);
    }
  });

  it("says, with --json, that a run is under way when the stack changes between its two exports (a pipeline then waits)", async () => {
    // A stand-in CLI whose revealed export has a pending operation the plain one no longer has: a run wrote in between.
    const dir = mkdtempSync(join(tmpdir(), "gms-recover-underway-"));
    try {
      const other = JSON.parse(REVEALED) as { deployment: { pending_operations: unknown[] } };
      other.deployment.pending_operations.pop();
      writeFileSync(join(dir, "revealed.json"), REVEALED);
      writeFileSync(join(dir, "sealed.json"), JSON.stringify(other));
      const fake = join(dir, "pulumi");
      const script = `case "$*" in *--show-secrets*) /bin/cat ${dir}/revealed.json ;; *) /bin/cat ${dir}/sealed.json ;; esac`;
      writeFileSync(fake, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
      const result = await run("--stack", "dev", "--pulumi", fake, "--json");
      expect(result.code).toBe(1);
      expect(result.err).toContain("stack dev changed between two exports of it: a run is under way");
      expect(JSON.parse(result.out)).toMatchObject({
        stack: "dev",
        applied: false,
        underway: true,
        blockers: [expect.stringContaining("a run is under way")],
        pendingCreates: [],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails (exit 1), saying so, when the Pulumi CLI cannot be run", async () => {
    const result = await run("--stack", "dev", "--pulumi", join(tmpdir(), "no-such-pulumi"));
    expect(result.code).toBe(1);
    expect(result.err).toContain("not found (put the Pulumi CLI on PATH, or give its path with --pulumi)");
  });
});
