/**
 * A failed operation's report is complete and the same on every run (issue 22): the program's own failure first,
 * as the program's and never counted as a step, then each failed step once in the order the program registered
 * the resources, whatever order they failed in; a connection or configuration error in the program carries no
 * stack; a setting is named as the user wrote it, by the program's lookups and the steps alike; a preview that
 * cannot run says it planned nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EngineError, LocalEngine, installPackageCopy } from "../../src/testing";

const PROGRAM = `import * as gms from "pulumi-gms";
for (const name of ["first", "second", "third"]) new gms.App(name, { name });
const actions = gms.getActionsOutput({ app: "Support" });
new gms.App("fourth", { name: "fourth", description: actions.apply((list) => String(list.length)) });
`;

describe("the report of a failed operation", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gms-failure-report-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "failure-report", private: true, type: "module" }));
    writeFileSync(join(dir, "index.ts"), PROGRAM);
    installPackageCopy(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const failure = async (operation: "preview" | "up", baseUrl: string, run: number) => {
    const lines: string[] = [];
    const engine = new LocalEngine({
      programDir: dir,
      stateFile: join(dir, `state-${operation}-${run}.json`),
      project: "failure-report",
      stack: "dev",
      config: { "gms:baseUrl": baseUrl, "gms:apiKey": { secret: "gms_failure_report_key" }, "gms:maxRetries": "0" },
      secretsPassphrase: "report",
      continueOnError: true,
      log: (line) => lines.push(line),
    });
    const error = (await engine[operation]().then(
      () => expect.unreachable(`${operation} succeeded`),
      (caught: unknown) => caught,
    )) as EngineError;
    return { error, lines };
  };

  it("puts the program's failure first and each failed step once, in registration order, the same on every run", async () => {
    const runs = await Promise.all([1, 2, 3].map((run) => failure("up", "http://127.0.0.1:1/v1", run)));
    const messages = runs.map(({ error }) => error.message);
    expect(new Set(messages).size).toBe(1);
    const [message] = messages;
    const lines = message!.split("\n");
    expect(lines[0]).toBe("The program failed, and 3 steps failed:");
    expect(lines[1]).toMatch(/^ {2}.*getActions: GET \/apps: connection to http:\/\/127\.0\.0\.1:1 failed/);
    expect(lines.slice(2).map((line) => /gms:App::(\w+) failed/.exec(line)?.[1])).toEqual(["first", "second", "third"]);
    expect(runs[0]!.error.errors.map((each) => each.code)).toEqual(["PROGRAM_FAILED", "STEP_FAILED", "STEP_FAILED", "STEP_FAILED"]);
    for (const { lines: printed } of runs) expect(printed.join("\n")).not.toMatch(/^\s+at /m);
  });

  it("names a bad gms:baseUrl as written, in the program's lookup and in the steps, with no stack", async () => {
    const { error } = await failure("up", "http://127.0.0.1:1/api", 4);
    const names = [...error.message.matchAll(/(gms:baseUrl|connection\.baseUrl|GMS_BASE_URL)/g)].map((match) => match[1]);
    expect(names.length).toBeGreaterThan(1);
    expect(new Set(names)).toEqual(new Set(["gms:baseUrl"]));
    expect(error.message).not.toMatch(/^\s+at /m);
  });

  it("says a preview that could not run planned nothing", async () => {
    const { lines } = await failure("preview", "http://127.0.0.1:1/v1", 5);
    expect(lines).toContain("Resources: none planned (the preview failed)");
    expect(lines.join("\n")).not.toMatch(/Resources: \d+ to create/);
  });
});
