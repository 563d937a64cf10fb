/**
 * The converter of a Pulumi YAML program into TypeScript, Python or Go: the project's example generator
 * (scripts/examplegen, a Go program on pkg/v3's program generators), which `npm run examples` runs over
 * examples/programs/. Discover's `--language` runs it on the program that adopts a workspace. It is found, in order:
 * - at the path GMS_CONVERTER names;
 * - as `pulumi-gms-convert` beside the `pulumi-gms` executable of a release tarball, which carries it;
 * - from its source, which the npm package ships, with `go run` when Go is installed.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { stringify } from "yaml";
import { committedPackageSchema } from "../schema/package-schema";
import { CONVERTER, PROGRAM_LANGUAGES, type ProgramLanguage } from "./languages";

export class ConverterError extends Error {
  override readonly name = "ConverterError";
}

interface Converter {
  command: string;
  args: string[];
  cwd?: string;
  /** How it was found, for messages. */
  label: string;
}

const isSea = (): boolean => {
  try {
    return (require("node:sea") as { isSea(): boolean }).isSea();
  } catch {
    return false;
  }
};

/** The converter's source folder in this package (the repository's, or the npm package's copy). */
const converterSource = () => resolve(__dirname, "..", "..", "scripts", "examplegen");

function findConverter(env: NodeJS.ProcessEnv): Converter {
  if (env.GMS_CONVERTER) {
    if (!existsSync(env.GMS_CONVERTER)) throw new ConverterError(`GMS_CONVERTER names ${env.GMS_CONVERTER}, which does not exist`);
    return { command: env.GMS_CONVERTER, args: [], label: env.GMS_CONVERTER };
  }
  const sea = isSea();
  if (sea) {
    const beside = join(dirname(process.execPath), CONVERTER + (process.platform === "win32" ? ".exe" : ""));
    if (existsSync(beside)) return { command: beside, args: [], label: beside };
  }
  const source = converterSource();
  if (!sea && existsSync(join(source, "go.mod")))
    return { command: "go", args: ["run", "-trimpath", "."], cwd: source, label: `go run in ${source}` };
  throw new ConverterError(
    `writing the program in another language than YAML needs the converter ${CONVERTER}: it is beside pulumi-gms in the ` +
      "release's pulumi-gms tarball; set GMS_CONVERTER to its path, or use --language yaml",
  );
}

function runConverter(converter: Converter, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(converter.command, [...converter.args, ...args], {
      cwd: converter.cwd,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", (error) =>
      fail(
        new ConverterError(
          (error as NodeJS.ErrnoException).code === "ENOENT" && converter.command === "go"
            ? "the converter runs from its source with Go, which is not installed: install Go, or set GMS_CONVERTER to the " +
                `${CONVERTER} of the release's pulumi-gms tarball`
            : `the converter (${converter.label}) could not start: ${error.message}`,
        ),
      ),
    );
    child.on("close", (code, signal) => {
      if (code === 0) done();
      else fail(new ConverterError(`the converter (${converter.label}) failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
    });
  });
}

/**
 * The program file of `language` for each YAML program of `programs` (a Pulumi.yaml's content each), as the converter
 * writes it, in their order; for YAML, each program itself. One run of the converter converts them all.
 */
export async function convertPrograms(
  programs: readonly Record<string, unknown>[],
  language: ProgramLanguage,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const texts = programs.map((program) => stringify(program, { lineWidth: 0 }));
  const { generated } = PROGRAM_LANGUAGES[language];
  if (generated === undefined) return texts;
  const converter = findConverter(env);
  const work = mkdtempSync(join(tmpdir(), "gms-discover-convert-"));
  try {
    // Each program in a folder of its own, named by its place: the converter writes <out>/<folder's name>/.
    const sources = texts.map((text, index) => {
      const source = join(work, "programs", String(index));
      mkdirSync(source, { recursive: true });
      writeFileSync(join(source, "Pulumi.yaml"), text);
      return source;
    });
    writeFileSync(join(work, "schema.json"), JSON.stringify(committedPackageSchema()));
    await runConverter(converter, ["-schema", join(work, "schema.json"), "-out", join(work, "out"), ...sources]);
    return sources.map((_, index) => readFileSync(join(work, "out", String(index), generated), "utf8"));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
