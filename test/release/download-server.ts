/**
 * The release as the engine downloads it, on this machine: a loopback HTTP server that serves release/ at the paths
 * of the GitHub release the schema's `pluginDownloadURL` names (`/<org>/<repo>/releases/download/v<version>/<file>`),
 * and keeps a log of every request. PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES, the engine's own setting for a mirror,
 * points that URL at the server: nothing else stands in for the real URL, which the SDKs send unchanged.
 *
 *   const server = await startDownloadServer(releaseDir, version);
 *   env = { ...env, ...server.engineEnv };   // and no PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION
 *   ... pulumi up ...
 *   server.downloads()                        // the tarballs fetched
 */
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import { pluginDownloadURL, releaseRepository } from "../../src/manifest";

export interface DownloadServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** The engine's environment that sends the schema's URL to this server (PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES). */
  engineEnv: NodeJS.ProcessEnv;
  /** Every request so far, `<method> <path> <status>`. */
  log: string[];
  /** The file names of the tarballs served so far (status 200), in order. */
  downloads(): string[];
  close(): Promise<void>;
}

/** The path prefix of a version's assets, as GitHub lays out a release's download URLs. */
const releasePath = (version: string) => `/${releaseRepository}/releases/download/v${version}/`;

export async function startDownloadServer(releaseDir: string, version: string): Promise<DownloadServer> {
  const log: string[] = [];
  const served: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://loopback").pathname);
    const prefix = releasePath(version);
    const file = path.startsWith(prefix) ? join(releaseDir, basename(path)) : undefined;
    const status = request.method === "GET" && file && path === `${prefix}${basename(path)}` && existsSync(file) ? 200 : 404;
    log.push(`${request.method} ${path} ${status}`);
    if (status !== 200) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    served.push(basename(path));
    response.writeHead(200, { "content-type": "application/gzip", "content-length": statSync(file!).size });
    createReadStream(file!).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The regexp is matched against the source's URL and the whole URL is replaced by an http(s) one, of which the
  // engine fills in `${VERSION}` and to which it adds the tarball's name. Neither part may hold `=` or `,`.
  const overrides = `^${pluginDownloadURL.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$=${origin}/${releaseRepository}/releases/download/v\${VERSION}`;
  return {
    origin,
    engineEnv: { PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES: overrides },
    log,
    downloads: () => [...served],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
