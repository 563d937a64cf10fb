/** What an operation shows of its steps (src/testing/step-report.ts), without a program or provider host. */
import { describe, expect, it } from "vitest";
import type { PlanStep, StepOp } from "../../src/testing";
import { StepReport } from "../../src/testing/step-report";

const TYPE = "pulumi-nodejs:dynamic/gms:App";
const step = (op: StepOp, name: string, over: Partial<PlanStep> = {}): PlanStep => ({
  op,
  urn: `urn:pulumi:dev::p::${TYPE}::${name}`,
  type: TYPE,
  name,
  changes: [],
  replaces: [],
  ...over,
});

describe("StepReport", () => {
  it("prints and lists steps in key order whatever order they finish in, counting unchanged ones without printing them", () => {
    const lines: string[] = [];
    const report = new StepReport((line) => lines.push(line), false);
    report.settle(2, step("update", "c", { changes: ["name"], durationMs: 1500 }));
    report.settle(1, step("same", "b"));
    expect(lines).toEqual([]);
    report.settle(0, step("create", "a", { durationMs: 250 }));
    report.settle(undefined, step("read", "r", { durationMs: 0 }));
    expect(lines).toEqual([`  + ${TYPE} a created (0.25s)`, `  ~ ${TYPE} c updated [name] (1.50s)`, `  > ${TYPE} r read (0.00s)`]);
    expect(report.nextKey).toBe(3);
    const { steps, counts } = report.result();
    expect(steps.map((each) => each.name)).toEqual(["a", "b", "c", "r"]);
    expect(counts).toEqual({ create: 1, update: 1, replace: 0, delete: 0, same: 1, refresh: 0, read: 1 });
  });

  it("in preview, prints what a step would do; the result shows what waits on work that never settled", () => {
    const lines: string[] = [];
    const report = new StepReport((line) => lines.push(line), true);
    report.settle(1, step("create", "b"));
    expect(lines).toEqual([]);
    expect(report.result().steps.map((each) => each.name)).toEqual(["b"]);
    expect(lines).toEqual([`  + ${TYPE} b create`]);
    expect(report.nextKey).toBe(2);
  });

  it("prints each delete held back with why", () => {
    const lines: string[] = [];
    const report = new StepReport((line) => lines.push(line), false);
    report.heldBack([{ urn: "u", type: TYPE, name: "old", id: "guid-old", reason: "the program failed" }]);
    expect(lines).toEqual([`  - ${TYPE} old not deleted: the program failed`]);
    expect(report.result().steps).toEqual([]);
  });
});
