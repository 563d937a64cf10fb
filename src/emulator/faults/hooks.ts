/**
 * The Fastify hooks of fault injection: they draw each subject request's fault (./sequence.ts), take its rate
 * budget (./rate-budget.ts), and answer, delay, reset, lose or late-run it.
 *
 * Which requests are subject: every request to a route under `/v1`, before authentication (faults stand
 * for the gateway in front of the service, so a request with a bad key can be faulted too), except the
 * signed file download (`public` routes), which stands in for a separate storage service and which the
 * emulator's own Context Source processing fetches. Unknown paths (404) are not subject.
 *
 * A request the rate limit refuses still takes its two draws (the sequence stays the one without a limit) and none of
 * the drawn faults applies to it; an admitted one takes a request from its budget whatever fault it then meets.
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { FaultSequence, type FaultStats, noFaults } from "./sequence";
import { type FaultSpec, formatRate, resolveFaults } from "./spec";
import { AnswerHold, LateRequests } from "./test-controls";

declare module "fastify" {
  interface FastifyInstance {
    /** Switches fault injection at run time and counts what it did (see `installFaults`). */
    faults: FaultController;
  }
}

export interface FaultController {
  /** Applies a spec (restarting its sequence from the seed and zeroing the stats), or turns faults off. */
  set(spec: FaultSpec | string | undefined): void;
  stats(): FaultStats;
  /**
   * Resolves once no late request is still waiting to run its handler (whatever spec is in force now): every
   * late request whose client has seen its connection drop has landed, or never will. Tests call it before
   * they count what the service holds.
   */
  idle(): Promise<void>;
  /**
   * Holds every answer from now on, after its handler has run and its writes committed, until the returned release
   * is called or the server closes: a test that kills its client at a moment of its own choosing holds the service's
   * answers meanwhile, so that the run cannot move past that moment however busy the machine is.
   */
  hold(): () => void;
}

export interface FaultHookOptions {
  /**
   * Waits out a drawn delay; tests replace it to observe delays without measuring time. A late request's
   * wait passes a signal that aborts when the server closes.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  /**
   * A monotonic clock in milliseconds, for a late request's deadline and the rate limit's refill; tests
   * replace it with `sleep`. Default `performance.now()`: the emulator's clock (its `Clock`) differs from
   * this machine's by a fixed offset only, so the durations measured on either are the same.
   */
  now?: () => number;
}

/** The key a request's budget is kept under: its bearer token, hashed (a request without one shares the empty key's). */
function budgetKey(request: FastifyRequest): string {
  const token = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? "";
  return createHash("sha256").update(token).digest("base64url");
}

/**
 * Installs the fault hooks on the server, decorates it with the controller as `faults`, and returns the
 * controller. Without a spec, faults are off until `set()`. Hooks run in the order they were added: call
 * this before adding the authentication hook so that faults come first.
 */
export function installFaults(app: FastifyInstance, spec?: FaultSpec | string, options: FaultHookOptions = {}): FaultController {
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const now = options.now ?? (() => performance.now());
  const toSequence = (given: FaultSpec | string | undefined) => (given === undefined ? undefined : new FaultSequence(resolveFaults(given)));
  let sequence = toSequence(spec);
  const losing = new WeakSet<FastifyRequest>();
  /** Delays to spend after the handler (`latency-at=answer`). */
  const answerDelays = new WeakMap<FastifyRequest, number>();
  /** Late requests: when they arrived, how long after the client has gone their handler runs, and their deadline. */
  const late = new WeakMap<FastifyRequest, { arrivedAt: number; lateByMs: number; deadline: number }>();
  /** Aborts the waits of late requests when the server closes: a service that stops finishes nothing more. */
  const closing = new AbortController();
  const waitingLate = new LateRequests();
  const answers = new AnswerHold();

  app.addHook("onRequest", async (request, reply) => {
    const current = sequence;
    if (!current || request.routeOptions.config.public || !request.routeOptions.url) return;
    if (current.faults.methods && !current.faults.methods.has(request.method)) return;
    // Drawn before the first await, so the sequence follows arrival order; the budget is taken on arrival too.
    const arrivedAt = now();
    const retryAfter = current.budgets?.take(budgetKey(request), arrivedAt);
    const { fault, delayMs, lateByMs } = current.draw(retryAfter !== undefined);
    if (delayMs > 0 && current.faults.latencyAt === "answer") answerDelays.set(request, delayMs);
    else if (delayMs > 0) await sleep(delayMs);
    if (retryAfter !== undefined) {
      return reply
        .status(429)
        .header("retry-after", String(retryAfter))
        .send({ detail: `Rate limit exceeded: ${formatRate(current.faults.rate!)} per API key; retry after ${retryAfter} s` });
    }
    switch (fault) {
      case "error":
        return reply.status(current.faults.status).send({ detail: "Service Unavailable (injected fault)" });
      case "throttle":
        return reply
          .status(429)
          .header("retry-after", String(current.faults.retryAfter))
          .send({ detail: "Too Many Requests (injected fault)" });
      case "reset":
        // Hijacked, Fastify runs nothing further for this request: no parsing, no handler. Destroying the
        // response destroys its socket (under `inject`, the injected request fails instead).
        reply.hijack();
        reply.raw.destroy();
        return reply;
      case "lost":
        losing.add(request);
        return;
      case "late":
        late.set(request, { arrivedAt, lateByMs, deadline: current.faults.deadline });
        return;
    }
  });

  // A late request: its body has arrived (so the handler can run without the client); the client is dropped
  // now and the handler runs later, unless that would be after the deadline or the server has closed. A
  // destroyed connection does not stop Fastify's pipeline from here on (only an unread body or a hijack does).
  app.addHook("preHandler", async (request, reply) => {
    const pending = late.get(request);
    if (pending === undefined) return;
    reply.raw.destroy();
    waitingLate.enter();
    try {
      await sleep(pending.lateByMs, closing.signal);
    } catch (error) {
      if (!closing.signal.aborted) throw error;
    } finally {
      waitingLate.leave();
    }
    // Fastify then runs nothing further for this request: no handler, no answer.
    if (closing.signal.aborted || now() - pending.arrivedAt > pending.deadline) reply.hijack();
  });

  // The handler has run and its writes committed; drop the connection instead of answering. Fastify writes
  // the response after this hook whatever it does (hijacking here does not stop it), so the hook waits for
  // the close: the write then goes nowhere, over a socket and under `inject` alike.
  app.addHook("onSend", async (request, reply) => {
    const answerDelay = answerDelays.get(request);
    if (answerDelay !== undefined) await sleep(answerDelay);
    const held = answers.held();
    if (held !== undefined) {
      await held;
      // Let go by the server's close, which would otherwise wait on this keep-alive connection: it ends with the answer.
      if (answers.closed) reply.header("connection", "close");
    }
    // A late request answered before its handler (by authentication, say) is dropped all the same.
    if (!(losing.has(request) || late.has(request)) || reply.raw.destroyed) return;
    const closed = once(reply.raw, "close");
    reply.raw.destroy();
    await closed;
  });

  app.addHook("onClose", async () => closing.abort());
  app.addHook("preClose", (done) => {
    answers.close();
    done();
  });

  const controller: FaultController = {
    set(next) {
      sequence = toSequence(next);
    },
    stats() {
      return { ...(sequence?.counts ?? noFaults()) };
    },
    hold: () => answers.hold(),
    idle: () => waitingLate.idle(),
  };
  app.decorate("faults", controller);
  return controller;
}
