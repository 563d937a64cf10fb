/**
 * docs/benchmarks.md is one sitting of `npm run bench` (test/bench/page.mts): a page made as report.mts makes it is;
 * a section run at another time, one missing, one out of place or one the run does not make is found; report.mts
 * refuses to run a subset (it takes no arguments) before it runs anything; and the committed page is one sitting.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILD_AND_DEMO, composePage, FUZZING, fuzzingSection, PROGRAMS, programSection, sittingProblems } from "./page.mts";

const root = join(__dirname, "..", "..");
const started = new Date("2026-12-07T20:00:00.000Z");
const finished = new Date("2026-12-07T20:20:00.000Z");
const FUZZING_TEXT = `\n## ${FUZZING}\n\nRun by hand on 2026-11-28.\n`;

/** The sections of a run that started its programs a minute apart, with `replace` applied to the i-th. */
function sections(replace: (index: number, section: string) => string = (_, section) => section): string[] {
  return [
    ...PROGRAMS.map((program, index) =>
      replace(index, programSection(program, new Date(started.getTime() + index * 60_000), 50, `Figures of ${program.id}.`)),
    ),
    `## ${BUILD_AND_DEMO}\n\n| figure | wall time |`,
  ];
}

const page = (sectionList = sections(), fuzzing = FUZZING_TEXT) =>
  composePage({ started, finished, machine: ["| CPU | 2 x test |"], sections: sectionList, fuzzing });

describe("sittingProblems", () => {
  it("finds none in a page made of one run's sections, the fuzzing section kept at its end", () => {
    expect(sittingProblems(page())).toEqual([]);
    expect(sittingProblems(page(sections(), ""))).toEqual([]);
    expect(fuzzingSection(page())).toBe(FUZZING_TEXT);
  });

  it("finds a section run at another time: one program's figures pasted into an older page", () => {
    const pasted = sections((index, section) =>
      index === 2 ? programSection(PROGRAMS[2], new Date("2026-12-09T10:00:00.000Z"), 300, "Figures of another day.") : section,
    );
    expect(sittingProblems(page(pasted))).toEqual([`"${PROGRAMS[2].title}" was run at 2026-12-09T10:00:00.000Z, outside the page's run`]);
  });

  it("finds a section that does not say when it ran, as the pages before this check wrote them", () => {
    const undated = sections((index, section) => (index === 0 ? section.replace(/started \S+, /, "") : section));
    expect(sittingProblems(page(undated))).toEqual([`"${PROGRAMS[0].title}" does not say when \`node ${PROGRAMS[0].file}\` started`]);
  });

  it("finds a missing section, sections out of order, one the run does not make, and a page with no run's dates", () => {
    const all = sections();
    expect(sittingProblems(page(all.filter((_, index) => index !== 4)))[0]).toMatch(/^the sections are .* not the run's /);
    expect(sittingProblems(page([all[1]!, all[0]!, ...all.slice(2)]))[0]).toMatch(/^the sections are .* not the run's /);
    expect(sittingProblems(page([...all, "## Figures run by hand\n\nPasted."]))[0]).toMatch(/^the sections are .* not the run's /);
    expect(sittingProblems(page().replace(/^\| date \|.*$/m, "| date | 2026-11-29 |"))).toContain(
      "the header names no run's dates (`| date | <start> to <end> (<n> s) |`)",
    );
  });

  it("finds the fuzzing section anywhere but at the end", () => {
    const all = sections();
    const misplaced = [...all.slice(0, 3), FUZZING_TEXT.trim(), ...all.slice(3)];
    expect(sittingProblems(page(misplaced, ""))).toEqual([`"${FUZZING}" is not the last section`]);
  });

  it("holds for docs/benchmarks.md", () => {
    expect(sittingProblems(readFileSync(join(root, "docs", "benchmarks.md"), "utf8"))).toEqual([]);
  });
});

describe("test/bench/report.mts", () => {
  it("refuses to run a subset of the benchmarks (any argument), running nothing and leaving the page as it was", () => {
    const before = readFileSync(join(root, "docs", "benchmarks.md"), "utf8");
    const run = spawnSync(process.execPath, [join(root, "test", "bench", "report.mts"), "cli"], { cwd: root, encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("test/bench/report.mts takes no arguments (got cli)");
    expect(run.stdout).toBe("");
    expect(readFileSync(join(root, "docs", "benchmarks.md"), "utf8")).toBe(before);
  });
});
