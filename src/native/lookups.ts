/**
 * The package's functions on the provider plugin (`gms:index:get<X>`, schema.json's functions), as the generated SDKs
 * call them: an Invoke the engine hands to the plugin, which looks the object up with the provider's configuration (or
 * the arguments' `connection`). Each comes in a plain form (a Promise of the result) and an Output form (arguments may
 * be Outputs), with the names the other languages' SDKs and the program converters use. The arguments and results are
 * those of `lookupDeclarations`, declared once. A result that is a list comes back as the single property `result`,
 * which `invokeSingle` unwraps.
 */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type LookupArgsOf, type LookupName, type LookupResultOf, lookupDeclarations } from "../lookups";
import { nativeToken } from "../provider/tokens";
import { withPluginVersion } from "./resource";

type Plain<N extends LookupName> = (args: LookupArgsOf<N>, opts?: pulumi.InvokeOptions) => Promise<LookupResultOf<N>>;
type OutputForm<N extends LookupName> = (
  args: pulumi.Inputs & { [K in keyof LookupArgsOf<N>]: pulumi.Input<LookupArgsOf<N>[K]> },
  opts?: pulumi.InvokeOutputOptions,
) => pulumi.Output<LookupResultOf<N>>;

/** Whether the plugin answers the lookup with its result's properties (an object) or as the single `result` (a list). */
const answersObject = (name: LookupName): boolean => lookupDeclarations[name].result instanceof z.ZodObject;

function plain<N extends LookupName>(name: N): Plain<N> {
  const invoke = answersObject(name) ? pulumi.runtime.invoke : pulumi.runtime.invokeSingle;
  return (args, opts = {}) => invoke(nativeToken(name), args as pulumi.Inputs, withPluginVersion(opts));
}

function outputForm<N extends LookupName>(name: N): OutputForm<N> {
  const invoke = answersObject(name) ? pulumi.runtime.invokeOutput : pulumi.runtime.invokeSingleOutput;
  return (args, opts = {}) => invoke<LookupResultOf<N>>(nativeToken(name), args, withPluginVersion(opts));
}

// What each returns: lookupDeclarations' descriptions, which schema.json and every SDK's docs carry.
export const getWorkspace = plain("getWorkspace");
export const getWorkspaceOutput = outputForm("getWorkspace");
export const getUsage = plain("getUsage");
export const getUsageOutput = outputForm("getUsage");
export const getActions = plain("getActions");
export const getActionsOutput = outputForm("getActions");
export const getAction = plain("getAction");
export const getActionOutput = outputForm("getAction");
export const getContexts = plain("getContexts");
export const getContextsOutput = outputForm("getContexts");
export const getContext = plain("getContext");
export const getContextOutput = outputForm("getContext");
export const getSkillTypes = plain("getSkillTypes");
export const getSkillTypesOutput = outputForm("getSkillTypes");
export const getEvalTypes = plain("getEvalTypes");
export const getEvalTypesOutput = outputForm("getEvalTypes");
export const getEvalType = plain("getEvalType");
export const getEvalTypeOutput = outputForm("getEvalType");
export const getDataRecords = plain("getDataRecords");
export const getDataRecordsOutput = outputForm("getDataRecords");
export const getFineTunes = plain("getFineTunes");
export const getFineTunesOutput = outputForm("getFineTunes");
export const getFineTune = plain("getFineTune");
export const getFineTuneOutput = outputForm("getFineTune");
