/**
 * `npm run s3:install`: installs moto's S3-compatible server (`moto_server`), pinned, into the git-ignored virtual
 * environment `.venv-s3/` (made with python3 when absent), so that the examples/gitops suites can keep Pulumi state in
 * a bucket on a loopback port (test/examples/s3-backend.ts starts it). `.ci/run` runs it before the tests: under
 * CI=true those suites are required. A plain `npm test` never needs Python: without `.venv-s3/` they are skipped.
 * A second run returns at once when the pinned version is installed.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const MOTO = "moto[server]==5.1.18";
const venv = join(resolve(import.meta.dirname, ".."), ".venv-s3");
const bin = (name: string) => join(venv, "bin", name);

function setup(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write(`s3:install: ${command} ${args.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})\n`);
    process.exit(1);
  }
}

const wanted = MOTO.split("==")[1]!;
const installed = existsSync(bin("python"))
  ? spawnSync(bin("python"), ["-c", "import moto; print(moto.__version__)"], { encoding: "utf8" }).stdout.trim()
  : "";
if (installed === wanted && existsSync(bin("moto_server"))) {
  process.stdout.write(`s3:install: moto ${wanted} is installed in ${venv}\n`);
} else {
  if (!existsSync(bin("python"))) {
    process.stdout.write(`s3:install: making the virtual environment ${venv}\n`);
    setup("python3", ["-m", "venv", venv]);
  }
  process.stdout.write(`s3:install: installing ${MOTO}\n`);
  setup(bin("pip"), ["install", "--quiet", "--disable-pip-version-check", MOTO]);
}
