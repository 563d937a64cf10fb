/**
 * Seeded, reproducible fault injection: answers a fraction of API requests with a 5xx or a 429, resets
 * their connection before any work, does the work and then loses the response, or loses the client first
 * and does the work afterwards (a late completion); and delays them. Beside the draws, a rate limit as a
 * gateway enforces one (`rate`, `burst`): each API key's budget of requests refills at a steady rate, and a
 * request that finds its key's budget spent is answered 429 with a true `Retry-After`.
 *
 * - ./spec.ts: the fault spec, one zod schema, and its string form;
 * - ./sequence.ts: the seeded generator and the draws of each request;
 * - ./rate-budget.ts: the rate limit's budget per key (a token bucket);
 * - ./hooks.ts: the Fastify hooks and the controller;
 * - ./test-controls.ts: the controller's `hold` and `idle`, which tests use.
 */
export { type FaultController, type FaultHookOptions, installFaults } from "./hooks";
export { type FaultStats, mulberry32 } from "./sequence";
export { type FaultSpec, FaultSpecError, formatFaultSpec, parseFaultSpec } from "./spec";
