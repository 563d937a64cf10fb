/**
 * `pulumi-gms/testing`: run Pulumi programs that use this package offline, against the emulator or a
 * real workspace, in tests. `LocalEngine` plays `pulumi preview/up/refresh/destroy` (see engine.ts for
 * exactly what it does and does not do); `ProviderHost` drives the dynamic-provider host directly;
 * `installPackageCopy` prepares a program directory. `StateFile` reads and writes LocalEngine's state; it loads
 * this package's placeholders of creates a killed run left in flight with the hook LocalEngine uses, `gmsPlaceholders`.
 */
import "../node-guard";
export { LocalEngine, type EngineOptions } from "./engine";
export { EngineError, type CheckFailure, type EngineErrorCode } from "./errors";
export { ProviderHost, type CheckResult, type DiffResult, type HostOptions } from "./host";
export { formatPlan, formatStep, formatSummary } from "./plan";
export { installPackageCopy } from "./program-dir";
export { UNKNOWN } from "./properties";
export type { CliResult, EngineResult, Operation, PlanStep, StackOutput, StepOp } from "./results";
export { StateFile, type ResourceState, type Snapshot, type StateFileOptions } from "./state";
export type { LostCreate, PlaceholderHook } from "./placeholder-hook";
export { gmsPlaceholders } from "../provider/window";
export { type Clock, systemClock } from "../provider/clock";
export { PulumiCliEngine, type CliEngineOptions } from "./cli-engine";
export { findPulumiCli, cliEnvironment, type PulumiCli, type CliLookup } from "./pulumi-cli";
