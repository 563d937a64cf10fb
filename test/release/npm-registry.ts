/**
 * The npm registry as `npm install pulumi-gms` meets it once the package is published, on this machine: a loopback
 * server that answers for `pulumi-gms` with `npm pack` of this checkout (the packument of its one version, and the
 * tarball) and hands every other request to the registry npm is configured with. npm's own setting points at it
 * (`npm_config_registry` in `npmEnv`), so a page's `npm install pulumi-gms @pulumi/pulumi` runs unchanged; npm takes
 * the other packages' tarballs through it too (it puts the configured registry's host in their URLs).
 *
 *   const registry = await startNpmRegistry(workDir);
 *   env = { ...env, ...registry.npmEnv };
 *   ... npm install pulumi-gms ...
 *   await registry.close();
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..");
const UPSTREAM = (process.env.npm_config_registry ?? "https://registry.npmjs.org/").replace(/\/?$/, "/");

export interface NpmRegistry {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** The environment that points npm at this registry. */
  npmEnv: NodeJS.ProcessEnv;
  /** The package's tarball, as `npm pack` wrote it. */
  tarball: string;
  close(): Promise<void>;
}

/** Packs this checkout (its `dist/` must be built) into `dir` and serves it, passing everything else upstream. */
export async function startNpmRegistry(dir: string): Promise<NpmRegistry> {
  const packed = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: ROOT, encoding: "utf8" });
  if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const tarball = join(dir, filename);
  const bytes = readFileSync(tarball);
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string };
  const tarballPath = `/${manifest.name}/-/${filename}`;

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://loopback").pathname;
    if (path === `/${manifest.name}`) {
      const packument = {
        name: manifest.name,
        "dist-tags": { latest: manifest.version },
        versions: {
          [manifest.version]: {
            ...manifest,
            dist: {
              tarball: `${origin}${tarballPath}`,
              integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
              shasum: createHash("sha1").update(bytes).digest("hex"),
            },
          },
        },
      };
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
      return;
    }
    if (path === tarballPath) {
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length }).end(bytes);
      return;
    }
    const accept = request.headers.accept;
    fetch(new URL(request.url!.replace(/^\//, ""), UPSTREAM), { headers: accept ? { accept } : {} }).then(
      async (upstream) => {
        const body = Buffer.from(await upstream.arrayBuffer());
        response.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/octet-stream" });
        response.end(body);
      },
      (error: Error) => response.writeHead(502, { "content-type": "text/plain" }).end(`upstream: ${error.message}\n`),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    npmEnv: { npm_config_registry: `${origin}/`, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" },
    tarball,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
