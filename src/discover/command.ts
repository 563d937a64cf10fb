/**
 * The run of `pulumi-gms discover` (src/cli/discover.ts parses its flags): list the workspace, write the import
 * document, print the summary or the JSON. Apart from the command's module so that `pulumi-gms --help` loads none of it.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { CommandIo } from "../cli/command";
import { EXIT } from "../cli/command";
import { AuthenticationError, ConnectionError, GmsClient, GmsError, RequestRateLimiter, TimeoutError } from "../client";
import { MigrationError } from "../migrate/errors";
import { discover } from ".";
import { projectLanguage } from "./program";
import { renderDocument, renderSummary } from "./render";
import { exportStack, managedObjects, StackExportError } from "./stack";

/** What the command's flags and environment ask for (src/cli/discover.ts reads them). */
export interface DiscoverSettings {
  baseUrl: string;
  apiKey: string;
  maxRetries: number | undefined;
  /** GMS_MAX_REQUESTS_PER_SECOND: the rate the listing keeps to. */
  maxRequestsPerSecond: number | undefined;
  out: string;
  stack: string | undefined;
  pulumi: string;
  json: boolean;
}

/** The base URL as printed: without any user or password it may carry. */
function shownUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.username = "";
  url.password = "";
  return url.toString().replace(/\/$/, "");
}

/** A failure in the user's terms: what was tried, and what to check. */
function failureMessage(error: unknown, settings: DiscoverSettings): string {
  const where = shownUrl(settings.baseUrl);
  if (error instanceof AuthenticationError)
    return (
      `the service at ${where} refused the API key (${error.status} ${error.detail}): ` +
      "GMS_API_KEY (or --api-key-file) must be a key of the workspace to list"
    );
  if (error instanceof ConnectionError || error instanceof TimeoutError)
    return `cannot reach the service at ${where} (GMS_BASE_URL): ${error.detail}`;
  if (error instanceof GmsError) return `the service at ${where} failed a request: ${error.message}`;
  if (error instanceof StackExportError || error instanceof MigrationError) return error.message;
  return (error as Error).message ?? String(error);
}

export async function discoverWith(settings: DiscoverSettings, io: CommandIo): Promise<number> {
  const client = new GmsClient({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    ...(settings.maxRetries === undefined ? {} : { maxRetries: settings.maxRetries }),
    ...(settings.maxRequestsPerSecond === undefined ? {} : { rateLimiter: new RequestRateLimiter(settings.maxRequestsPerSecond) }),
  });
  try {
    const managed =
      settings.stack === undefined
        ? undefined
        : managedObjects(settings.stack, await exportStack(settings.pulumi, settings.stack, io.cwd, io.env));
    const { language, assumed } = projectLanguage(io.cwd);
    const discovery = await discover(client, {
      ...(managed ? { managed } : {}),
      language,
      ...(assumed ? { assumedLanguage: assumed } : {}),
      file: settings.out,
    });
    writeFileSync(resolve(io.cwd, settings.out), renderDocument(discovery));
    if (settings.json) io.out(`${JSON.stringify({ file: settings.out, ...discovery }, null, 2)}\n`);
    else io.err(renderSummary(discovery, settings.out));
    return EXIT.done;
  } catch (error) {
    io.err(`pulumi-gms discover: ${failureMessage(error, settings)}\n`);
    return EXIT.failed;
  } finally {
    await client.close();
  }
}
