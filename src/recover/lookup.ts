/**
 * Each pending create's lookup: its kind's own `findCreated`, the lookup with which the provider settles a lost create
 * (the same identifying fields, lists and narrowing: recover has no matcher of its own), run against the service the
 * create went to (./service.ts), with the interrupted update's start shifted onto that service's clock (./window.ts).
 * One client per service and key, as the provider keeps them.
 */
import { createHash } from "node:crypto";
import { GmsClient, GmsError, RequestRateLimiter } from "../client";
import type { Kind } from "../provider/kind";
import { kinds } from "../resources";
import type { Match, PendingLookup } from "./plan";
import { type ServiceSettings, serviceOf } from "./service";
import type { PendingCreate, StackReading } from "./stack";
import { landedBy, sinceOnService } from "./window";

export interface CreateLookup extends PendingLookup {
  /** When (this machine's ms) a create the run had in flight at its last write has landed, if it was going to. */
  landedBy?: number | undefined;
}

export class CreateLookups {
  readonly #clients = new Map<string, GmsClient>();
  /** One limiter per rate, shared by the clients held to it, as the provider process shares its own. */
  readonly #limiters = new Map<number, RequestRateLimiter>();
  readonly #keys = new Set<string>();

  constructor(
    private readonly stack: StackReading,
    private readonly env: NodeJS.ProcessEnv,
    /** The interrupted update's start on this machine's clock, when recover knows it. */
    private readonly startedAt: number | undefined,
  ) {}

  #client(settings: ServiceSettings): GmsClient {
    const key = JSON.stringify([
      settings.baseUrl,
      createHash("sha256").update(settings.apiKey).digest("hex"),
      settings.requestDeadlineMs,
      settings.maxRetries,
      settings.maxRequestsPerSecond,
    ]);
    let client = this.#clients.get(key);
    this.#keys.add(settings.apiKey);
    if (!client) {
      client = new GmsClient({
        baseUrl: settings.baseUrl,
        apiKey: settings.apiKey,
        ...(settings.requestDeadlineMs === undefined ? {} : { requestDeadlineMs: settings.requestDeadlineMs }),
        ...(settings.maxRetries === undefined ? {} : { maxRetries: settings.maxRetries }),
        ...(settings.maxRequestsPerSecond === undefined ? {} : { rateLimiter: this.#limiter(settings.maxRequestsPerSecond) }),
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  #limiter(rate: number): RequestRateLimiter {
    let limiter = this.#limiters.get(rate);
    if (!limiter) this.#limiters.set(rate, (limiter = new RequestRateLimiter(rate)));
    return limiter;
  }

  /** Every pending create's lookup, at once. */
  lookUpAll(): Promise<CreateLookup[]> {
    return Promise.all(this.stack.pendingCreates.map((create) => this.lookUp(create)));
  }

  async lookUp(create: PendingCreate): Promise<CreateLookup> {
    const base = { urn: create.urn, kind: create.kind, heldAs: create.heldAs };
    const settings = serviceOf(create, this.stack, this.env);
    if ("missing" in settings) return { ...base, found: { failure: `cannot look its object up: ${settings.missing}` } };
    const client = this.#client(settings);
    let found: Match[];
    try {
      const kind = kinds[create.kind] as Kind;
      found = await kind.findCreated(client, create.inputs as never);
    } catch (error) {
      const detail = error instanceof GmsError ? error.message : (error as Error).message;
      return { ...base, found: { failure: `its lookup at ${settings.baseUrl} failed: ${detail}` } };
    }
    // Read after the lookup, whose answers carried the service's Date.
    return {
      ...base,
      found: { matches: found, since: sinceOnService(this.startedAt, client) },
      landedBy: landedBy(this.stack.lastWriteAt, client),
    };
  }

  /** The API keys of the services looked at. */
  keys(): string[] {
    return [...this.#keys];
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.close()));
  }
}
