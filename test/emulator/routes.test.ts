/**
 * The route census: every route in the spec's route tables is served by the emulator. The tables are the
 * `| METHOD | /path |` rows of each "### <Section>" under "## Endpoints" of ../shared/spec/service-interface.md
 * (the Documents table lists suffixes of `/contexts/{contextGuid}/documents`). Each route is sent with a
 * fresh random UUID for every path parameter and the API key; it is served when its answer is not the one an
 * unknown route gets (the emulator's own 404s name what is missing, e.g. `App not found`).
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEmulator } from "./harness";

// CI checks the repository out with shared/ beside it; a user's clone has nothing beside it. The census
// runs when the spec is there, is skipped (saying why) when it is not, and is required when CI=true.
const specPath = join(__dirname, "..", "..", "..", "shared", "spec", "service-interface.md");
const checkSpec = existsSync(specPath) || process.env.CI === "true";
if (!checkSpec) {
  console.log(
    `routes.test.ts: skipping the route census: ${specPath} is absent ` +
      `(it ships with this team's shared/ folder, not with the repository)`,
  );
}

/** The spec's route count today: a parsing bug that finds fewer (or more) rows cannot pass unnoticed. */
const SPEC_ROUTES = 104;
const DOCUMENTS_PARENT = "/contexts/{contextGuid}/documents";

interface SpecRoute {
  section: string;
  method: string;
  /** As the spec writes it, placeholders included, relative to `/v1`. */
  path: string;
}

/** The route rows of every table under "## Endpoints", each with the "### <Section>" it sits in. */
function parseSpecRoutes(markdown: string): SpecRoute[] {
  const routes: SpecRoute[] = [];
  let inEndpoints = false;
  let section = "";
  for (const line of markdown.split("\n")) {
    if (line.startsWith("## ")) inEndpoints = line.trim() === "## Endpoints";
    if (!inEndpoints) continue;
    if (line.startsWith("### ")) section = line.slice(4).trim();
    const row = /^\|\s*(GET|POST|PUT|PATCH|DELETE)\s*\|\s*([^|]*?)\s*\|/.exec(line);
    if (!row) continue;
    const [, method, cell] = row as unknown as [string, string, string];
    if (section === "Documents") {
      // "(none)" is the parent path itself; "/" is the parent with a trailing slash.
      routes.push({ section, method, path: cell === "(none)" ? DOCUMENTS_PARENT : `${DOCUMENTS_PARENT}${cell}` });
    } else {
      routes.push({ section, method, path: cell });
    }
  }
  return routes;
}

/** The path with a fresh random UUID for every `{placeholder}`, under `/v1`. */
const concrete = (path: string) => `/v1${path.replace(/\{[^}]+\}/g, () => randomUUID())}`;

describe("route census: the emulator serves every route of the spec", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeAll(() => {
    emulator = createTestEmulator();
  });
  afterAll(() => emulator?.close());

  it("parses the Documents suffixes onto their parent path", () => {
    const routes = parseSpecRoutes(
      [
        "## Endpoints",
        "### Documents",
        "| Method | Path suffix | Request | Response |",
        "|---|---|---|---|",
        "| GET | (none) | skip | envelope |",
        "| POST | /{guid}/embed | | |",
        "| DELETE | / | | |",
        "### Files",
        "| POST | /files/upload | `data` | `{ url }` |",
        "## Errors",
        "| 404 | Missing App |",
      ].join("\n"),
    );
    expect(routes).toEqual([
      { section: "Documents", method: "GET", path: "/contexts/{contextGuid}/documents" },
      { section: "Documents", method: "POST", path: "/contexts/{contextGuid}/documents/{guid}/embed" },
      { section: "Documents", method: "DELETE", path: "/contexts/{contextGuid}/documents/" },
      { section: "Files", method: "POST", path: "/files/upload" },
    ]);
  });

  it.skipIf(!checkSpec)("serves all of the spec's routes", async () => {
    expect(existsSync(specPath), `the spec is missing at ${specPath} (shared/spec/ beside the repository)`).toBe(true);
    const routes = parseSpecRoutes(readFileSync(specPath, "utf8"));
    expect(routes, "routes parsed from the spec's Endpoints tables").toHaveLength(SPEC_ROUTES);
    expect(new Set(routes.map((route) => route.section)).size, "sections with routes").toBe(17);

    // What an unknown route answers (404 naming it, or 405 for a known path with another method): the census
    // tells a served route from it by the answer.
    const unknown = await emulator.call("GET", "/v1/gms-route-census-no-such-route");
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/^Not Found: no route matches GET \/v1\/gms-route-census-no-such-route/);
    const isUnknownRoute = (reply: { status: number; body: { detail?: unknown } }) =>
      reply.status === 405 || (reply.status === 404 && String(reply.body?.detail).startsWith("Not Found: no route matches "));
    // The emulator's own 404 for a missing record is not mistaken for it.
    const missingApp = await emulator.call("GET", concrete("/apps/{guid}"));
    expect(missingApp).toMatchObject({ status: 404, body: { detail: "App not found" } });
    expect(isUnknownRoute(missingApp)).toBe(false);

    const missing: string[] = [];
    for (const route of routes) {
      const url = concrete(route.path);
      const reply = await emulator.call(route.method, url, route.method === "GET" ? undefined : {});
      if (isUnknownRoute(reply))
        missing.push(`${route.method} ${route.path} (${route.section}): ${reply.status} ${JSON.stringify(reply.body)}`);
    }
    console.log(`served ${routes.length - missing.length} of ${routes.length} spec routes`);
    expect(missing, `spec routes the emulator does not serve:\n${missing.join("\n")}`).toEqual([]);
  });
});
