/**
 * Read-only lookups of what the public interface cannot create (Actions, Contexts, Skill types, Eval
 * types), of fine-tunes made outside the program, and of what a workspace allows, each in the usual Pulumi pair: `getX(args)` returns a promise,
 * `getXOutput(args)` an Output. They run in the program (during preview too, like any data source) with
 * the stack's `gms:baseUrl` / `gms:apiKey`, the environment, or `args.connection`.
 *
 * Each lookup's arguments and result are declared once in `lookupDeclarations`: the functions take their
 * types from it and the generated `schema.json` its functions.
 */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { appsApi } from "./api/apps";
import { dataApi } from "./api/data";
import { evalsApi } from "./api/evals";
import { FineTuneStatus, type FineTuneRecord, fineTunesApi } from "./api/fine-tunes";
import { skillsApi } from "./api/skills";
import { workspacesApi } from "./api/workspaces";
import { GmsError, type GmsClient } from "./client";
import { Connection } from "./provider/connection";
import { Session, settingTexts } from "./provider/session";
import { ConfigurationError } from "./settings";

const connectionArg = {
  connection: Connection.optional().describe(
    "Where to look, when not the stack's `gms:baseUrl` / `gms:apiKey` (or GMS_BASE_URL / GMS_API_KEY).",
  ),
};
const appArg = { app: z.string().describe("The App, by GUID or by name.") };
const nameArg = (what: string) => ({ name: z.string().describe(`The ${what}'s name.`) });

const guid = (what: string) => z.string().describe(`The ${what}'s GUID.`);
const WorkspaceInfo = z
  .strictObject({
    guid: guid("workspace"),
    name: z.string().describe("The workspace's name."),
    slug: z.string().describe("The workspace's slug."),
    apps: z
      .array(
        z
          .strictObject({ guid: guid("App"), name: z.string().describe("The App's name."), slug: z.string().describe("The App's slug.") })
          .meta({ title: "WorkspaceAppInfo", description: "An App of the workspace." }),
      )
      .describe("The workspace's Apps."),
  })
  .meta({ title: "WorkspaceInfo", description: "The workspace the API key selects." });
const UsageInfo = z
  .strictObject({
    feature: z.string().describe("The limited feature, for example `apps`."),
    used: z.number().int().describe("How many the workspace uses."),
    limit: z.number().int().describe("How many the workspace may use."),
  })
  .meta({ title: "UsageInfo", description: "The workspace's usage of one feature against its limit." });
const ActionInfo = z
  .strictObject({
    guid: guid("Action"),
    app: z.string().describe("The GUID of the App the Action belongs to."),
    name: z.string().describe("The Action's name."),
    actionType: z.string().describe("The Action's type, for example `prompt`."),
    model: z.string().nullable().describe("The model the Action uses, or null."),
  })
  .meta({ title: "ActionInfo", description: "An Action of an App." });
const ContextInfo = z
  .strictObject({ guid: guid("Context"), name: z.string().describe("The Context's name.") })
  .meta({ title: "ContextInfo", description: "A Context of the workspace." });
const SkillTypeInfo = z
  .strictObject({
    name: z.string().describe("The Skill type's name."),
    metadata: z
      .array(
        z
          .strictObject({
            name: z.string().describe("The setting's name."),
            required: z.boolean().describe("Whether a Skill of this type must set it."),
            type: z.string().nullable().describe("The setting's value type, or null."),
          })
          .meta({ title: "SkillTypeMetadataInfo", description: "A metadata setting a Skill type defines." }),
      )
      .describe("The metadata settings its Skills use."),
  })
  .meta({ title: "SkillTypeInfo", description: "A Skill type of the workspace." });
const EvalTypeInfo = z
  .strictObject({
    guid: guid("Eval type"),
    name: z.string().describe("The Eval type's name."),
    description: z.string().nullable().describe("What the Eval type scores, or null."),
  })
  .meta({ title: "EvalTypeInfo", description: "An Eval type an Eval can use." });
const DataRecordInfo = z
  .strictObject({
    guid: guid("Data record"),
    model: z.string().nullable().describe("The model that generated it, or null."),
    createdAt: z.string().describe("When it was logged (ISO 8601)."),
  })
  .meta({ title: "DataRecordInfo", description: "A Data record logged under an App." });

const FineTuneInfo = z
  .strictObject({
    guid: guid("fine-tune"),
    app: z.string().describe("The GUID of the App the fine-tune belongs to."),
    name: z.string().describe("The fine-tune's name."),
    dataset: z.string().nullable().describe("The GUID of the Dataset it was made against, or null."),
    baseModel: z.string().describe("The provider's base model it trains."),
    status: FineTuneStatus.describe("The job's status: `processing`, then `succeeded` or `failed`."),
    vendorFinetuneName: z.string().describe("The provider-side job name."),
    failureReason: z.string().nullable().describe("Why the provider failed the job; null unless `status` is `failed`."),
  })
  .meta({ title: "FineTuneInfo", description: "A fine-tune of an App." });

/** Every lookup's arguments and result; `schema.json` lists them as the package's functions (`gms:index:<name>`). */
export const lookupDeclarations = {
  getWorkspace: {
    description: "The workspace the API key selects, with its Apps.",
    args: z.strictObject({ ...connectionArg }),
    result: WorkspaceInfo,
  },
  getUsage: {
    description: "The workspace's usage against its limits, one entry per feature.",
    args: z.strictObject({ ...connectionArg }),
    result: z.array(UsageInfo),
  },
  getActions: {
    description: "The Actions of an App (Actions are configured outside the public interface).",
    args: z.strictObject({ ...appArg, ...connectionArg }),
    result: z.array(ActionInfo),
  },
  getAction: {
    description: "One Action of an App by name; the error lists the App's Actions when there is no such Action.",
    args: z.strictObject({ ...appArg, ...nameArg("Action"), ...connectionArg }),
    result: ActionInfo,
  },
  getContexts: {
    description: "The workspace's Contexts (the libraries Context Sources fill).",
    args: z.strictObject({ ...connectionArg }),
    result: z.array(ContextInfo),
  },
  getContext: {
    description: "One Context of the workspace by name; the error lists the Contexts when there is no such Context.",
    args: z.strictObject({ ...nameArg("Context"), ...connectionArg }),
    result: ContextInfo,
  },
  getSkillTypes: {
    description: "The Skill types the workspace has, with their metadata definitions.",
    args: z.strictObject({ ...connectionArg }),
    result: z.array(SkillTypeInfo),
  },
  getEvalTypes: {
    description: "The Eval types an Eval can use.",
    args: z.strictObject({ ...connectionArg }),
    result: z.array(EvalTypeInfo),
  },
  getEvalType: {
    description: "One Eval type by name; the error lists the Eval types when there is no such Eval type.",
    args: z.strictObject({ ...nameArg("Eval type"), ...connectionArg }),
    result: EvalTypeInfo,
  },
  getDataRecords: {
    description: "Data records logged under an App, newest first (at most `limit`, default 100).",
    args: z.strictObject({
      ...appArg,
      limit: z.number().int().optional().describe("At most this many records (default 100)."),
      ...connectionArg,
    }),
    result: z.array(DataRecordInfo),
  },
  getFineTunes: {
    description: "The fine-tunes of an App, with their job status.",
    args: z.strictObject({ ...appArg, ...connectionArg }),
    result: z.array(FineTuneInfo),
  },
  getFineTune: {
    description: "One fine-tune of an App by name; the error lists the App's fine-tunes when there is no such fine-tune.",
    args: z.strictObject({ ...appArg, ...nameArg("fine-tune"), ...connectionArg }),
    result: FineTuneInfo,
  },
} satisfies Record<string, { description: string; args: z.ZodObject; result: z.ZodType }>;

export type LookupName = keyof typeof lookupDeclarations;
/** What a lookup takes, as the program passes it. */
export type LookupArgsOf<N extends LookupName> = z.input<(typeof lookupDeclarations)[N]["args"]>;
/** What a lookup returns. */
export type LookupResultOf<N extends LookupName> = z.output<(typeof lookupDeclarations)[N]["result"]>;

export type LookupArgs = LookupArgsOf<"getWorkspace">;
export type ActionsArgs = LookupArgsOf<"getActions">;
export type WorkspaceInfo = LookupResultOf<"getWorkspace">;
export type ActionInfo = LookupResultOf<"getAction">;
export type NamedGuid = LookupResultOf<"getContext">;

/** The program's lookups: one session, configured afresh from the stack's config by each call. */
const programSession = new Session();

/**
 * The program's client: `args.connection`, else the stack's `gms:*` settings (or the GMS_* variables), as the
 * provider reads them, so that an error names the setting as the program wrote it (`gms:baseUrl`, not
 * `connection.baseUrl`).
 */
function programClient(args: LookupArgs | undefined): GmsClient {
  const config = new pulumi.Config("gms");
  programSession.configure(settingTexts({ get: (key) => (key.startsWith("gms:") ? config.get(key.slice("gms:".length)) : undefined) }));
  return programSession.clientFor(args?.connection);
}

/**
 * A lookup the program called failed to reach the service or was refused (a connection, configuration or
 * service error): a `pulumi.RunError`, so that the CLI and LocalEngine print its message alone, no stack, with
 * the client's stable `code`.
 */
export class LookupFailedError extends pulumi.RunError {
  override readonly name = "LookupFailedError";
  constructor(
    readonly lookup: LookupName,
    readonly code: string,
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

/** An argument bag whose values, at any depth, may be Outputs or promises. */
type DeepInput<T> = T extends object ? { [K in keyof T]: pulumi.Input<DeepInput<T[K]>> } : T;

/** Turns a lookup into the `getXOutput` form: inputs may be Outputs, the result is one. */
const outputForm =
  <A, R>(lookup: (args: A) => Promise<R>) =>
  (args: pulumi.Input<DeepInput<NonNullable<A>>> = {} as DeepInput<NonNullable<A>>): pulumi.Output<R> =>
    pulumi.output(args).apply((resolved) => lookup(resolved as unknown as A));

/**
 * Each lookup, given the client to ask: the program's functions below use the stack's configuration (or
 * `args.connection`), the native provider's Invoke the provider's (`invokeLookup`).
 */
const lookups: { [N in LookupName]: (client: GmsClient, args: LookupArgsOf<N>) => Promise<LookupResultOf<N>> } = {
  async getWorkspace(client) {
    const workspace = await workspacesApi.current(client);
    const apps = await workspacesApi.apps(client, workspace.guid);
    return { guid: workspace.guid, name: workspace.name, slug: workspace.slug, apps };
  },
  getUsage: (client) => workspacesApi.currentUsage(client),
  async getActions(client, args) {
    const app = await resolveApp(client, args.app);
    const actions = await appsApi.actions(client, app.guid);
    return actions.map((action) => ({
      guid: action.guid,
      app: app.guid,
      name: action.name,
      actionType: action.actionType,
      model: action.model,
    }));
  },
  getAction: async (client, args) => pick(await lookups.getActions(client, args), args.name, `Action of App "${args.app}"`),
  getContexts: (client) => workspacesApi.currentContexts(client),
  getContext: async (client, args) => pick(await lookups.getContexts(client, args), args.name, "Context"),
  getSkillTypes: (client) => skillsApi.types(client),
  getEvalTypes: (client) => evalsApi.types(client),
  getEvalType: async (client, args) => pick(await lookups.getEvalTypes(client, args), args.name, "Eval type"),
  async getDataRecords(client, args) {
    const app = await resolveApp(client, args.app);
    const records = await dataApi.firstOfApp(client, app.guid, args.limit ?? 100);
    return records.map((record) => ({ guid: record.guid, model: record.model, createdAt: record.createdAt }));
  },
  async getFineTunes(client, args) {
    const app = await resolveApp(client, args.app);
    return (await fineTunesApi.listOfApp(client, app.guid)).map(toFineTuneInfo);
  },
  getFineTune: async (client, args) => pick(await lookups.getFineTunes(client, args), args.name, `fine-tune of App "${args.app}"`),
};

/** The program's form of a lookup: the client of the stack's configuration, or of `args.connection`. */
const inProgram =
  <N extends LookupName>(name: N) =>
  async (args: LookupArgsOf<N>): Promise<LookupResultOf<N>> => {
    try {
      return await lookups[name](programClient(args), args);
    } catch (error) {
      if (error instanceof GmsError || error instanceof ConfigurationError)
        throw new LookupFailedError(name, error instanceof GmsError ? error.code : "configuration", `${name}: ${error.message}`, error);
      throw error;
    }
  };

/** The workspace the API key selects, with its Apps. */
export const getWorkspace = (args: LookupArgsOf<"getWorkspace"> = {}) => inProgram("getWorkspace")(args);
export const getWorkspaceOutput = outputForm(getWorkspace);

/** The workspace's usage against its limits, one entry per feature. */
export const getUsage = (args: LookupArgsOf<"getUsage"> = {}) => inProgram("getUsage")(args);
export const getUsageOutput = outputForm(getUsage);

/** The Actions of an App (Actions are configured outside the public interface). */
export const getActions = inProgram("getActions");
export const getActionsOutput = outputForm(getActions);

/** One Action of an App by name; the error lists the App's Actions when there is no such Action. */
export const getAction = inProgram("getAction");
export const getActionOutput = outputForm(getAction);

/** The workspace's Contexts (the libraries Context Sources fill). */
export const getContexts = (args: LookupArgsOf<"getContexts"> = {}) => inProgram("getContexts")(args);
export const getContextsOutput = outputForm(getContexts);

/** One Context of the workspace by name. */
export const getContext = inProgram("getContext");
export const getContextOutput = outputForm(getContext);

/** The Skill types the workspace has, with their metadata definitions. */
export const getSkillTypes = (args: LookupArgsOf<"getSkillTypes"> = {}) => inProgram("getSkillTypes")(args);
export const getSkillTypesOutput = outputForm(getSkillTypes);

/** The Eval types an Eval can use. */
export const getEvalTypes = (args: LookupArgsOf<"getEvalTypes"> = {}) => inProgram("getEvalTypes")(args);
export const getEvalTypesOutput = outputForm(getEvalTypes);

/** One Eval type by name. */
export const getEvalType = inProgram("getEvalType");
export const getEvalTypeOutput = outputForm(getEvalType);

/** Data records logged under an App, newest first (at most `limit`, default 100). */
export const getDataRecords = inProgram("getDataRecords");
export const getDataRecordsOutput = outputForm(getDataRecords);

/** The fine-tunes of an App, with their job status (for example to use a model trained outside the program). */
export const getFineTunes = inProgram("getFineTunes");
export const getFineTunesOutput = outputForm(getFineTunes);

/** One fine-tune of an App by name; the error lists the App's fine-tunes when there is no such fine-tune. */
export const getFineTune = inProgram("getFineTune");
export const getFineTuneOutput = outputForm(getFineTune);

/** A lookup's arguments that do not match its declaration: each failure names the argument. */
export class LookupArgumentsError extends Error {
  override readonly name = "LookupArgumentsError";
  constructor(readonly failures: { property: string; reason: string }[]) {
    super(failures.map(({ property, reason }) => `${property}: ${reason}`).join("; "));
  }
}

/**
 * The native provider's Invoke of `gms:index:<name>`: the arguments checked against the lookup's declaration
 * (a mismatch is a LookupArgumentsError naming each argument), then asked with the client of the provider's
 * configuration, or of `args.connection`. Undefined for a name that is no lookup. A result that is not an object
 * (the lists) comes back as the single property `result`, which the SDKs unwrap (`invokeSingle`).
 */
export async function invokeLookup(
  session: Session,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  if (!Object.hasOwn(lookupDeclarations, name)) return undefined;
  const lookup = name as LookupName;
  const parsed = lookupDeclarations[lookup].args.safeParse(args);
  if (!parsed.success)
    throw new LookupArgumentsError(
      parsed.error.issues.map((issue) => ({ property: issue.path.join(".") || "(arguments)", reason: issue.message })),
    );
  const parsedArgs = parsed.data as LookupArgsOf<LookupName> & LookupArgs;
  const result = await (lookups[lookup] as (client: GmsClient, args: unknown) => Promise<unknown>)(
    session.clientFor(parsedArgs.connection),
    parsedArgs,
  );
  return result !== null && typeof result === "object" && !Array.isArray(result) ? (result as Record<string, unknown>) : { result };
}

const toFineTuneInfo = (fineTune: FineTuneRecord): LookupResultOf<"getFineTune"> => ({
  guid: fineTune.guid,
  app: fineTune.app,
  name: fineTune.name,
  dataset: fineTune.dataset,
  baseModel: fineTune.baseModel,
  status: fineTune.status,
  vendorFinetuneName: fineTune.vendorFinetuneName,
  failureReason: fineTune.failureReason,
});

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function resolveApp(client: GmsClient, app: string): Promise<{ guid: string; name: string }> {
  if (GUID.test(app)) return appsApi.get(client, app);
  const apps = await appsApi.list(client);
  return pick(apps, app, "App");
}

/**
 * A lookup by name found nothing: `No <what> named "<name>". Available: <names>.` A `pulumi.RunError`,
 * as it explains a mistake in the program's arguments: the CLI prints the message without a stack.
 */
export class LookupNotFoundError extends pulumi.RunError {
  override readonly name = "LookupNotFoundError";
  constructor(
    /** What was looked for, for example `Action of App "Support"`. */
    readonly what: string,
    /** The name asked for. */
    readonly wanted: string,
    /** The names there are. */
    readonly available: string[],
  ) {
    super(`No ${what} named "${wanted}". Available: ${available.map((item) => `"${item}"`).join(", ") || "none"}.`);
  }
}

function pick<T extends { name: string }>(items: T[], name: string, what: string): T {
  const found = items.find((item) => item.name === name);
  if (found) return found;
  throw new LookupNotFoundError(
    what,
    name,
    items.map((item) => item.name),
  );
}
