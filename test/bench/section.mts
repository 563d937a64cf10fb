/**
 * A benchmark's section of docs/benchmarks.md. Each program prints its figures as before (`print`) and, when
 * test/bench/report.mts runs it, also writes its section (markdown tables of the same figures, then the printed
 * lines verbatim) to the file named by the environment variable `GMS_BENCH_SECTION`; report.mts joins the sections
 * into the page. Run on its own, a program only prints.
 */
import { writeFileSync } from "node:fs";

export const SECTION_ENV = "GMS_BENCH_SECTION";

export class Section {
  private readonly printed: string[] = [];
  private readonly parts: string[] = [];

  /** Prints a line, and keeps it for the section's verbatim output. */
  print(line: string): void {
    console.log(line);
    this.printed.push(line);
  }

  /** A paragraph of the section (markdown). */
  text(markdown: string): void {
    this.parts.push(markdown);
  }

  /** A markdown table. */
  table(head: string[], rows: string[][]): void {
    const line = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`;
    this.parts.push([line(head), `|${head.map(() => "---").join("|")}|`, ...rows.map(line)].join("\n"));
  }

  /** Writes the section where report.mts asked for it (nothing when the program runs on its own). */
  write(): void {
    const path = process.env[SECTION_ENV];
    if (!path) return;
    const output = ["What the program printed:", "", "```text", ...this.printed, "```"].join("\n");
    writeFileSync(path, `${[...this.parts, output].join("\n\n")}\n`);
  }
}

/** Figures as the tables show them. */
export const tableMs = (seconds: number) => `${(seconds * 1000).toFixed(0)} ms`;
export const tableRatio = (value: number, base: number) => `${(value / base).toFixed(2)}x`;
