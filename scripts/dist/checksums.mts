/**
 * `release/checksums.txt`: the SHA-256 of every artefact of the release (the tarballs at its top and the wheel in
 * python/), one `<hex>  <name>` line each as `sha256sum` writes them, named by the file's own name: a GitHub release
 * holds its assets side by side, so `sha256sum -c checksums.txt` checks them where a user downloaded them. The Go
 * module (go/) is published as a tag of the repository, not as a file, and is left out.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type DistContext, DistError } from "./context.mts";

export const CHECKSUMS = "checksums.txt";

/** The artefacts' paths under release/, sorted: its files, and python/'s. */
export function artefacts(release: string): string[] {
  const files = (folder: string) =>
    existsSync(join(release, folder))
      ? readdirSync(join(release, folder), { withFileTypes: true })
          .filter((entry) => entry.isFile() && entry.name !== CHECKSUMS)
          .map((entry) => (folder ? `${folder}/${entry.name}` : entry.name))
      : [];
  return [...files(""), ...files("python")].sort();
}

export const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

export async function writeChecksums(context: DistContext): Promise<void> {
  const paths = artefacts(context.release);
  if (paths.length === 0) throw new DistError("release/ holds no artefact to sum: build the executables or the SDKs first");
  writeFileSync(
    join(context.release, CHECKSUMS),
    paths.map((path) => `${sha256(join(context.release, path))}  ${basename(path)}\n`).join(""),
  );
  context.progress(`release/${CHECKSUMS}: the SHA-256 of ${paths.length} artefacts`);
}
