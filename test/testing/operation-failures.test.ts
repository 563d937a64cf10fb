/**
 * How a failure propagates through an operation and how the operation reports it (src/testing/operation-failures.ts),
 * without a program, provider host or child process. failure-report, after-failure and failures show LocalEngine
 * feeds it what happened.
 */
import { describe, expect, it } from "vitest";
import { EngineError } from "../../src/testing";
import { OperationFailures, stepError } from "../../src/testing/operation-failures";
import { resource, urn } from "./app-resource";

const registration = (name: string, dependencies: string[] = [], parent = "") => ({ urn: urn(name), dependencies, parent });
const failedStep = (name: string, why = "boom") => stepError("create", urn(name), new Error(why));
const report = (failures: OperationFailures, order: string[], program?: EngineError): EngineError | undefined => {
  try {
    failures.throwReport(order, program);
    return undefined;
  } catch (error) {
    return error as EngineError;
  }
};

describe("OperationFailures: propagation", () => {
  it("skips a failed step's dependents, protects what it depends on, and stops at the first without continueOnError", () => {
    const failures = new OperationFailures(false);
    expect(failures.progress(false)).toMatchObject({ checkFailed: false, stoppedBy: undefined, preview: false });
    failures.registrationFailed(registration("a", [urn("dep")], urn("parent")), failedStep("a"));
    failures.registrationFailed(registration("b"), failedStep("b"));
    const progress = failures.progress(false);
    expect([progress.failed(urn("a")), progress.failed(urn("b")), progress.failed(urn("dep"))]).toEqual([true, true, false]);
    expect(progress.stoppedBy).toBe(urn("a"));
    expect(failures.deleteFacts(urn("dep"))).toEqual({ protected: true, stoppedBy: urn("a") });
    expect(failures.deleteFacts(urn("parent")).protected).toBe(true);
    expect(failures.deleteFacts(urn("a")).protected).toBe(false);
    expect(failures.leftOverFacts(true)).toEqual({ checkFailed: false, programFailed: true, firstFailed: urn("a") });
  });

  it("with continueOnError, or for a skip or a refusal, stops nothing", () => {
    const continuing = new OperationFailures(true);
    continuing.registrationFailed(registration("a"), failedStep("a"));
    expect(continuing.progress(false)).toMatchObject({ stoppedBy: undefined });
    expect(continuing.progress(false).failed(urn("a"))).toBe(true);
    const stopping = new OperationFailures(false);
    stopping.registrationFailed(registration("s"), new EngineError("SKIPPED", "skipped"));
    stopping.registrationFailed(registration("u"), new EngineError("UNSUPPORTED", "refused"));
    stopping.registrationFailed(registration("c"), new EngineError("CHECK_FAILED", "checks"));
    expect(stopping.progress(false).stoppedBy).toBeUndefined();
    expect(stopping.progress(false).failed(urn("s"))).toBe(true);
  });

  it("a failed delete is reported, protects what it depends on and stops, without failing its dependents", () => {
    const failures = new OperationFailures(false);
    failures.deleteFailed(resource("old", { dependencies: [urn("dep")] }), new Error("gone wrong"));
    expect(failures.deleteFacts(urn("dep"))).toEqual({ protected: true, stoppedBy: urn("old") });
    expect(failures.progress(false).failed(urn("old"))).toBe(false);
    expect(report(failures, [])?.message).toBe(`delete of ${urn("old")} failed: gone wrong`);
    const continuing = new OperationFailures(true);
    continuing.deleteFailed(resource("old"), new Error("gone wrong"));
    expect(continuing.deleteFacts(urn("x")).stoppedBy).toBeUndefined();
  });

  it("holds deletes back with why, and keeps what they depend on", () => {
    const failures = new OperationFailures(false);
    const held = failures.holdBack([resource("x", { dependencies: [urn("dep")], parent: urn("parent") }), resource("y")], "why");
    const expected = ["x", "y"].map((name) => ({
      urn: urn(name),
      type: "pulumi-nodejs:dynamic/gms:App",
      name,
      id: `guid-${name}`,
      reason: "why",
    }));
    expect(held).toEqual(expected);
    expect(failures.holdBack([resource("z")], "other")).toHaveLength(1);
    expect(failures.heldBack.map((each) => each.name)).toEqual(["x", "y", "z"]);
    expect([urn("dep"), urn("parent"), urn("x")].map((each) => failures.deleteFacts(each).protected)).toEqual([true, true, false]);
  });

  it("check failures: the planner learns of them, and they are reported together, apart from the step errors", () => {
    const failures = new OperationFailures(false);
    failures.checkFailed([{ urn: urn("a"), property: "name", reason: "must not be empty" }]);
    failures.checkFailed([{ urn: urn("b"), property: "slug", reason: "too long" }]);
    expect(failures.progress(true)).toMatchObject({ checkFailed: true, preview: true });
    expect(failures.leftOverFacts(false)).toMatchObject({ checkFailed: true });
    expect(failures.answered(new EngineError("CHECK_FAILED", "a failed its checks")).code).toBe("CHECK_FAILED");
    expect(failures.answered(new EngineError("SKIPPED", "b was skipped")).code).toBe("SKIPPED");
    expect(report(failures, [])).toBeUndefined();
    let thrown: EngineError | undefined;
    try {
      failures.throwCheckFailures();
    } catch (error) {
      thrown = error as EngineError;
    }
    expect(thrown?.code).toBe("CHECK_FAILED");
    expect(thrown?.message).toBe(
      `Resources failed their checks:\n  ${urn("a")}\n    name: must not be empty\n  ${urn("b")}\n    slug: too long`,
    );
    expect(thrown?.failures.map((failure) => failure.property)).toEqual(["name", "slug"]);
    expect(() => new OperationFailures(false).throwCheckFailures()).not.toThrow();
  });

  it("answers a registration's failed step as a failed registration, and anything else as an error", () => {
    const failures = new OperationFailures(true);
    const failed = failedStep("a");
    failures.registrationFailed(registration("a"), failed);
    expect(failures.failedStep(failures.answered(failed))).toBe(urn("a"));
    const refused = new EngineError("UNSUPPORTED", "refused");
    failures.registrationFailed(registration("u"), refused);
    expect(failures.failedStep(failures.answered(refused))).toBeUndefined();
    const odd = failures.answered("not an error");
    expect([odd.code, odd.message, failures.failedStep(odd)]).toEqual(["STEP_FAILED", "not an error", undefined]);
    expect(failures.failedStep(failedStep("read-only"))).toBeUndefined();
  });
});

describe("OperationFailures: the report", () => {
  const order = ["a", "b", "c"].map(urn);

  it("reports nothing when nothing failed, and a single failure as itself", () => {
    expect(report(new OperationFailures(false), order)).toBeUndefined();
    const failures = new OperationFailures(false);
    const only = failedStep("b");
    failures.answered(only);
    expect(report(failures, order)).toBe(only);
  });

  it("lists the program's failure first, then each failed step in registration order, whatever order they failed in", () => {
    const failures = new OperationFailures(true);
    for (const name of ["c", "a", "b"]) {
      const error = failedStep(name);
      failures.registrationFailed(registration(name), error);
      failures.answered(error);
    }
    const program = new EngineError("PROGRAM_FAILED", "getActions: GET /apps: connection failed");
    const error = report(failures, order, program);
    expect(error?.code).toBe("PROGRAM_FAILED");
    expect(error?.message.split("\n")).toEqual([
      "The program failed, and 3 steps failed:",
      "  getActions: GET /apps: connection failed",
      ...["a", "b", "c"].map((name) => `  create of ${urn(name)} failed: boom`),
    ]);
    expect(error?.errors.map((each) => each.code)).toEqual(["PROGRAM_FAILED", "STEP_FAILED", "STEP_FAILED", "STEP_FAILED"]);
    expect(error?.cause).toBe(program);
  });

  it("places a failure by the URN its message names when it is not a registration's, and the unplaced last", () => {
    const failures = new OperationFailures(true);
    failures.failed(new EngineError("STEP_FAILED", "no URN here"));
    failures.failed(stepError("read", urn("c"), new Error("x")));
    failures.deleteFailed(resource("a"), new Error("y"));
    expect(report(failures, order)?.message.split("\n")).toEqual([
      "3 steps failed:",
      `  delete of ${urn("a")} failed: y`,
      `  read of ${urn("c")} failed: x`,
      "  no URN here",
    ]);
  });

  it("does not repeat a failed step as the program's failure", () => {
    const failures = new OperationFailures(true);
    const error = failedStep("a");
    failures.registrationFailed(registration("a"), error);
    failures.answered(error);
    const echo = new EngineError("PROGRAM_FAILED", `Error: ${error.message}`);
    expect(report(failures, order, echo)).toBe(error);
    const awaited = new EngineError("PROGRAM_FAILED", `resource ${urn("b")} [gms:App] failed to register`);
    expect(report(failures, order, awaited)).toBe(error);
    const fresh = new OperationFailures(true);
    expect(report(fresh, order, awaited)).toBe(awaited);
  });
});
