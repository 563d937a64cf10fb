import { type StoredAction, DEFAULT_ENVIRONMENT } from "./actions";
import type { ActionStore } from "./actions";
import { COUNT, RecordTable, type StoredRecord, flag, integer, nullable, oneOf, table, text } from "./columns";
import type { Database } from "./database";
import type { DataStore } from "./data";
import { BadRequestError, RecordNotFoundError } from "./errors";
import type { Variant } from "../../api/actions";
import type { ExperimentStore, StoredExperiment } from "./experiments";
import { type Caller, RECORD_COLUMNS, createdBy, newGuid } from "./records";
import type { SessionStore } from "./sessions";
import type { SignedQuery, UrlSignature, UrlSigner } from "./signing";
import { emulatedOutput } from "./workflows";

/**
 * A run's input: a string or the value of each variable by name (spec: "a string, or key-value pairs"). A string
 * is the value of the one variable when there is exactly one, and the text that follows the prompt when there are none.
 */
export type RunInput = string | Record<string, unknown>;

/** A chat message sent along with a run. */
export interface RunMessage {
  role: string;
  content: string;
  files?: string[] | undefined;
}

/** What a run takes besides the Action (or Experiment) it runs, in the names a run's body gives it (so a body will do). */
export interface RunOptions {
  input: RunInput;
  /** Answer the newest earlier generation of the same Action and input instead of generating. */
  cache?: boolean | undefined;
  /** The Session's GUID. */
  session?: string | null | undefined;
  /** The environment the Action must be deployed to; {@link DEFAULT_ENVIRONMENT} when left out. */
  environment?: string | undefined;
  extUserId?: string | null | undefined;
  messages?: RunMessage[] | null | undefined;
}

/** An Experiment prompt's generation and the side of the Experiment it was assigned to. */
export interface ExperimentGeneration {
  generation: GenerationRecord;
  variant: Variant;
}

/** How a run was assigned to an Experiment: by the alternation, or forced by the caller. */
interface Assignment {
  experiment: StoredExperiment;
  variant: Variant;
  forced: boolean;
}

/**
 * Action runs and Experiment prompts. No model is called: the generated text is the Action's prompt
 * rendered with the input, so tests can predict it. Every generation logs a Data record (linked to the
 * run's Session, if any) and is kept here, complete at once, for its stream and asynchronous retrieval.
 */
export const GENERATIONS = table("generations", {
  id: integer,
  guid: text,
  workspace_id: integer,
  action_id: integer,
  data_id: integer,
  cache_key: text,
  output: text,
  experiment_id: nullable(integer),
  variant: nullable(oneOf(["primary", "secondary"])),
  /** The run named its variant (not counted in the alternation). */
  forced: flag,
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(GENERATIONS, {
  joins:
    "JOIN actions a ON a.id = generations.action_id JOIN data d ON d.id = generations.data_id LEFT JOIN experiments e ON e.id = generations.experiment_id",
  derived: {
    action_guid: ["a.guid", text],
    data_guid: ["d.guid", text],
    data_deleted: ["d.deleted_at IS NOT NULL", flag],
    experiment_guid: ["e.guid", nullable(text)],
  },
});

/**
 * One generation: the text an Action run produced and the Data record that logs it, with the Experiment the run
 * went through and the side of it that served it.
 */
export type GenerationRecord = StoredRecord<typeof RECORDS>;

export class GenerationStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: {
      readonly actions: ActionStore;
      readonly data: DataStore;
      readonly experiments: ExperimentStore;
      readonly sessions: SessionStore;
      readonly signer: UrlSigner;
    },
  ) {}

  /**
   * Runs an Action. With an Experiment (manually controlled traffic) the caller has chosen the Action,
   * which must be one of the Experiment's two (400), and the run is recorded as a forced assignment; the
   * input must then give every variable of both Actions, as an Experiment prompt's does (spec: "If the two
   * Actions have different variable sets, all inputs must be provided").
   */
  run(caller: Caller, actionGuid: string, options: RunOptions & { experiment?: string | null | undefined }): GenerationRecord {
    return this.db.transaction(() => {
      const action = this.store.actions.get(caller, actionGuid);
      if (!options.experiment) return this.generate(caller, action, action.variables, options, undefined);
      const experiment = this.store.experiments.get(caller, options.experiment);
      const variant = this.store.experiments.variantOf(experiment, action.guid);
      const { variables } = this.experimentActions(caller, experiment);
      return this.generate(caller, action, variables, options, { experiment, variant, forced: true });
    });
  }

  /**
   * Prompts an Experiment: the forced Action when given (one of the two, else 400), otherwise primary and
   * secondary in turn, starting with primary, counting the Experiment's earlier unforced assignments. The
   * input must give every variable of both Actions.
   */
  promptExperiment(caller: Caller, guid: string, options: RunOptions & { actionGuid?: string | undefined }): ExperimentGeneration {
    return this.db.transaction(() => {
      const experiment = this.store.experiments.get(caller, guid);
      const { primary, secondary, variables } = this.experimentActions(caller, experiment);
      const forced = options.actionGuid !== undefined;
      const variant = forced ? this.store.experiments.variantOf(experiment, options.actionGuid!) : this.nextVariant(experiment);
      const action = variant === "primary" ? primary : secondary;
      return { generation: this.generate(caller, action, variables, options, { experiment, variant, forced }), variant };
    });
  }

  /** An Experiment's two Actions and the union of their variables (the primary's first, in the order they appear). */
  private experimentActions(caller: Caller, experiment: StoredExperiment) {
    const primary = this.store.actions.get(caller, experiment.primaryAction);
    const secondary = this.store.actions.get(caller, experiment.secondaryAction);
    return { primary, secondary, variables: [...new Set([...primary.variables, ...secondary.variables])] };
  }

  /** A generation of the caller's workspace; otherwise 404 `Generation not found`. */
  get(caller: Caller, guid: string): GenerationRecord {
    return this.find({ guid, workspaceId: caller.workspaceId });
  }

  /** Signs a generation's stream URL for the signed URL lifetime counted from `issuedAt` (the service's now unless a test moves the clock). */
  signStream(guid: string, issuedAt?: Date): UrlSignature {
    return this.store.signer.sign("generation-stream", guid, issuedAt);
  }

  /**
   * The generation behind a signed stream URL. Needs no caller: the signature is the authority, checked as
   * a signed file URL's is (403 `Signature does not match`, then 403 `Request has expired`), then 404
   * `Generation not found`.
   */
  readSignedStream(guid: string, query: SignedQuery, at?: Date): GenerationRecord {
    this.store.signer.verify("generation-stream", guid, query, at);
    return this.find({ guid });
  }

  /** The one generation `where` selects; otherwise 404 `Generation not found`. */
  private find(where: { guid: string; workspaceId?: number }): GenerationRecord {
    const generation = RECORDS.find(this.db, where);
    if (!generation) throw new RecordNotFoundError("Generation not found");
    return generation;
  }

  /**
   * Checks the environment (400), the input against `variables` (400) and the Session (404), then answers
   * the cached generation when asked for and there is one, else generates and logs a new one.
   */
  private generate(
    caller: Caller,
    action: StoredAction,
    variables: string[],
    options: RunOptions,
    assignment: Assignment | undefined,
  ): GenerationRecord {
    const environment = options.environment ?? DEFAULT_ENVIRONMENT;
    // Spec: the status for an Action not deployed to the environment is not shown; the emulator answers 400.
    if (!action.environments.includes(environment)) throw new BadRequestError(`Action is not deployed to ${environment}`);
    const values = inputValues(options.input, variables);
    // Resolved here too, so that a cache hit refuses an unknown Session as a generation does.
    if (options.session) this.store.sessions.get(caller, options.session);
    const key = cacheKey(values);
    const hit = options.cache ? this.cached(caller, action, key) : undefined;
    if (hit) return hit;

    const output = render(action.prompt, values);
    const fullPromptSent = [output, ...(options.messages ?? []).map((message) => `${message.role}: ${message.content}`)].join("\n");
    const data = this.store.data.create(caller, {
      action: action.guid,
      // As sent: a string that filled the one variable stays a string in the log.
      input: options.input,
      output,
      fullPromptSent,
      promptTemplate: action.prompt,
      model: action.model,
      numInputTokens: splitTokens(fullPromptSent).length,
      numOutputTokens: splitTokens(output).length,
      latency: 0,
      session: options.session,
      metadata: {
        environment,
        ...(options.extUserId && { extUserId: options.extUserId }),
        ...(assignment && { experiment: assignment.experiment.guid, variant: assignment.variant, forced: assignment.forced }),
      },
    });
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, this.db.clock.iso()),
      guid: newGuid(),
      actionId: action.id,
      dataId: data.id,
      cacheKey: key,
      output,
      experimentId: assignment?.experiment.id,
      variant: assignment?.variant,
      forced: assignment?.forced ?? false,
    });
    return RECORDS.find(this.db, { id })!;
  }

  /** The newest generation of the Action for the same input whose Data record is not deleted. */
  private cached(caller: Caller, action: StoredAction, key: string): GenerationRecord | undefined {
    const where = { workspaceId: caller.workspaceId, actionId: action.id, cacheKey: key, dataDeleted: false };
    return RECORDS.find(this.db, where, [{ desc: "id" }]);
  }

  /** Primary on an even count of earlier unforced assignments, secondary on an odd one. */
  private nextVariant(experiment: StoredExperiment): Variant {
    const { n } = COUNT.decode(this.db.get("SELECT count(*) AS n FROM generations WHERE experiment_id = ? AND forced = 0", experiment.id)!);
    return n % 2 === 0 ? "primary" : "secondary";
  }
}

/**
 * The emulator's tokens: each run of non-blank characters with the blanks after it (blanks that open
 * the text make a token of their own), so that the tokens joined are the text again.
 */
export const splitTokens = (text: string): string[] => text.match(/\S+\s*|\s+/g) ?? [];

/**
 * The values the input gives the variables, or 400 unless it fits them: an object giving exactly those
 * variables, each a string, number or boolean; or a string, which is the value of the one variable when
 * there is exactly one (spec: the input is "a string, or key-value pairs"), is refused when there are
 * several (which variable it fills is ambiguous), and stays a string when there are none (the spec asks for
 * key-value pairs only "when the prompt template has {{variable}} placeholders", so a string is the input of
 * a prompt without them; an object is refused there). Details name the variables at fault.
 */
function inputValues(input: RunInput, variables: string[]): RunInput {
  if (typeof input === "string") {
    if (variables.length === 1) return { [variables[0]!]: input };
    if (variables.length > 1) throw new BadRequestError(`Input must be an object with a value for each variable: ${variables.join(", ")}`);
    return input;
  }
  if (variables.length === 0) throw new BadRequestError("Input must be a string: the prompt has no variables");
  const missing = variables.filter((name) => !Object.hasOwn(input, name));
  if (missing.length > 0) throw new BadRequestError(`Missing input ${named(missing)}`);
  const unknown = Object.keys(input).filter((name) => !variables.includes(name));
  if (unknown.length > 0) throw new BadRequestError(`Unknown input ${named(unknown)}`);
  for (const [name, value] of Object.entries(input)) {
    if (!["string", "number", "boolean"].includes(typeof value)) {
      throw new BadRequestError(`Input variable ${name} must be a string, number or boolean`);
    }
  }
  return input;
}

const named = (names: string[]): string => `${names.length === 1 ? "variable" : "variables"}: ${names.join(", ")}`;

/**
 * The generated text: the prompt with each `{{variable}}` filled from the values, or (a prompt without
 * variables) the prompt and a string input on lines of their own (either alone when the other is empty).
 */
function render(prompt: string, input: RunInput): string {
  if (typeof input === "string") return [prompt, input].filter((part) => part !== "").join("\n");
  return emulatedOutput(prompt, Object.fromEntries(Object.entries(input).map(([name, value]) => [name, String(value)])));
}

/**
 * Identical inputs share a key whatever the order of their variables; keyed on the values the input gives, a
 * string that fills a prompt's one variable shares the key of the object giving that variable the same value.
 */
function cacheKey(input: RunInput): string {
  if (typeof input === "string") return JSON.stringify(input);
  return JSON.stringify(Object.fromEntries(Object.entries(input).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
