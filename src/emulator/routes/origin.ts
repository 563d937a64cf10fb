import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";

/** What absolute URLs start with while the server is not listening (Fastify `inject` in tests). */
export const FALLBACK_ORIGIN = "http://127.0.0.1";

/**
 * Where the emulator's absolute URLs (signed file URLs, Workflow result and feedback URLs) point: the
 * configured `publicUrl`, else the address the server listens on. The request's Host header is never
 * read: the client chooses it, and a URL built from it would send whoever follows it anywhere.
 */
export function originResolver(app: FastifyInstance, publicUrl: string | undefined): () => string {
  if (publicUrl !== undefined) {
    const fixed = normalizePublicUrl(publicUrl);
    return () => fixed;
  }
  return () => listeningOrigin(app.server.address());
}

/** `http(s)://host[:port][/prefix]` without a trailing slash; anything else is a programming error, thrown at startup. */
export function normalizePublicUrl(publicUrl: string): string {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    throw new TypeError(`publicUrl must be an absolute http(s) URL, got ${JSON.stringify(publicUrl)}`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password || url.search || url.hash) {
    throw new TypeError(`publicUrl must be an http(s) URL without credentials, query or fragment, got ${JSON.stringify(publicUrl)}`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** `http://address:port` of a listening socket; a wildcard address names the loopback one of its family. */
function listeningOrigin(address: AddressInfo | string | null): string {
  if (address === null || typeof address === "string") return FALLBACK_ORIGIN;
  const ipv6 = address.family === "IPv6" || address.address.includes(":");
  let host = address.address;
  if (host === "0.0.0.0") host = "127.0.0.1";
  else if (host === "::") host = "::1";
  return `http://${ipv6 ? `[${host}]` : host}:${address.port}`;
}
