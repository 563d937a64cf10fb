/**
 * `pulumi-gms/testing`: run Pulumi programs that use this package offline, against the emulator or a
 * real workspace, in tests. `LocalEngine` plays `pulumi preview/up/refresh/destroy` (see engine.ts for
 * exactly what it does and does not do); `ProviderHost` drives the dynamic-provider host directly;
 * `installPackageCopy` prepares a program directory.
 */
export { LocalEngine, type EngineOptions } from "./engine";
export { EngineError, type CheckFailure, type EngineErrorCode } from "./errors";
export { ProviderHost, type CheckResult, type DiffResult, type HostOptions } from "./host";
export { formatPlan, formatStep, formatSummary } from "./plan";
export { installPackageCopy } from "./program-dir";
export { UNKNOWN } from "./properties";
export type { CliResult, EngineResult, Operation, PlanStep, StackOutput, StepOp } from "./results";
export { StateFile, type ResourceState, type Snapshot } from "./state";
export { PulumiCliEngine, type CliEngineOptions } from "./cli-engine";
export { findPulumiCli, cliEnvironment, type PulumiCli, type CliLookup } from "./pulumi-cli";
