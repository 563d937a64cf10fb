/**
 * The release's archives: gzipped ustar tarballs of regular files at the root, as `pulumi plugin install` and the
 * engine's download unpack them, written the same byte for byte for the same files.
 *
 * Written here rather than with the npm `tar` package: `tar` is no dependency of this package (it is in node_modules only
 * as a dependency of npm's own tools, node-gyp and pacote, at whatever version they ask for), and a release's archives
 * must not change with a version that something else chose. Nor does the system's `tar`, which sea.mts runs to
 * unpack, serve to write them: GNU and BSD tar write different headers. Nor would `tar` 7.5 keep the bytes: with
 * `portable` and mtime 0 it writes the numeric fields one digit shorter and ended by a space, and no owner name, so
 * every header would differ from the releases' so far (tried on a plugin-like pair of files). What is written is the
 * least a ustar reader needs: one header block per regular file at the root, owner root, time 0, then two empty
 * blocks.
 */
import { gzipSync, constants as zlib } from "node:zlib";

export interface TarEntry {
  name: string;
  /** The permission bits, e.g. 0o755; the engine keeps them when it unpacks, which is what makes an executable run. */
  mode: number;
  data: Buffer;
}

/** A gzipped ustar archive of `entries`: owner root, time 0, the given modes. */
export function gzippedTarball(entries: TarEntry[]): Buffer {
  return gzipSync(tarArchive(entries), { level: zlib.Z_BEST_COMPRESSION });
}

function tarArchive(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const { name, mode, data } of entries) {
    const header = Buffer.alloc(512);
    const field = (offset: number, length: number, value: string) => header.write(value, offset, length, "ascii");
    const octal = (offset: number, length: number, value: number) =>
      field(offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
    field(0, 100, name);
    octal(100, 8, mode);
    octal(108, 8, 0);
    octal(116, 8, 0);
    octal(124, 12, data.length);
    octal(136, 12, 0);
    field(148, 8, " ".repeat(8));
    field(156, 1, "0");
    field(257, 8, "ustar\u000000");
    field(265, 32, "root");
    field(297, 32, "root");
    let sum = 0;
    for (const byte of header) sum += byte;
    field(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  // The end of the archive: two empty blocks.
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
