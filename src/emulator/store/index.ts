import { ACTIONS, ACTION_ENVIRONMENTS, ActionStore } from "./actions";
import { APPS, AppStore } from "./apps";
import type { Table } from "./columns";
import { Database } from "./database";
import { API_KEYS, FEATURE_USAGE, WORKSPACES, WORKSPACE_MEMBERS, WorkspaceStore } from "./workspaces";
import { DATA, DATA_SESSIONS, DataStore } from "./data";
import { FILES, FileStore } from "./files";
import { PROVIDERS, ProviderStore } from "./providers";
import { MODELS, ModelStore } from "./models";
import { SKILLS, SkillStore } from "./skills";
import { EVALS, EVAL_TYPES, EvalStore } from "./evals";
import { WORKFLOWS, WORKFLOW_BLOCKS, WORKFLOW_RUNS, WORKFLOW_RUN_BLOCKS, WorkflowStore } from "./workflows";
import { DATASETS, DATASET_ITEMS, DatasetStore } from "./datasets";
import { EXPERIMENTS, ExperimentStore } from "./experiments";
import { CONTEXTS, ContextStore } from "./contexts";
import { DOCUMENTS, DocumentStore } from "./documents";
import { CONTEXT_SOURCES, ContextSourceStore } from "./context-sources";
import { SESSIONS, SessionStore } from "./sessions";
import { GENERATIONS, GenerationStore } from "./generations";
import { FEEDBACK, FeedbackStore } from "./feedback";
import { FINETUNES, type FineTuneOptions, FineTuneStore } from "./fine-tunes";
import { FILE_SIGNING_KEY, UrlSigner } from "./signing";
import type { Migration } from "./migrations";
import { Clock } from "../clock";

/**
 * Every table the stores read, as described next to its store: after the migrations (./migrations.ts)
 * each must match its description, or the Store does not start.
 */
export const TABLES: readonly Table[] = [
  WORKSPACES,
  WORKSPACE_MEMBERS,
  API_KEYS,
  FEATURE_USAGE,
  APPS,
  ACTIONS,
  ACTION_ENVIRONMENTS,
  SESSIONS,
  DATA,
  DATA_SESSIONS,
  FILES,
  FILE_SIGNING_KEY,
  PROVIDERS,
  MODELS,
  SKILLS,
  EVAL_TYPES,
  EVALS,
  WORKFLOWS,
  WORKFLOW_BLOCKS,
  WORKFLOW_RUNS,
  WORKFLOW_RUN_BLOCKS,
  DATASETS,
  DATASET_ITEMS,
  EXPERIMENTS,
  CONTEXTS,
  DOCUMENTS,
  CONTEXT_SOURCES,
  GENERATIONS,
  FEEDBACK,
  FINETUNES,
];

/** The database does not hold the tables the stores are described to read (see `TABLES`). */
export class StorageMismatchError extends Error {
  override readonly name = "StorageMismatchError";
  constructor(
    readonly path: string,
    readonly problems: string[],
  ) {
    super(
      `The emulator database ${path} does not have the tables this pulumi-gms reads (${problems.join("; ")}). ` +
        "It was not written by the emulator or was edited since; start the emulator with another --db file.",
    );
  }
}

/** How the stores behave where the emulator can be tuned. */
export interface StoreOptions {
  fineTunes?: FineTuneOptions | undefined;
  /** The service's clock, which every record is stamped by (default: this machine's). */
  clock?: Clock | undefined;
  /** The schema history to open the database with (tests only; default: ./migrations.ts `MIGRATIONS`). */
  migrations?: readonly Migration[] | undefined;
}

/**
 * The emulator's storage: one SQLite database, one store per kind. Stores know nothing of HTTP; they
 * take a `Caller` (the workspace and user an API key selects), enforce the spec's rules and throw
 * domain errors from `./errors`. A store that calls others names them in its constructor and is handed
 * this object, so no store module imports this one.
 */
export class Store {
  readonly db: Database;
  /** The service's clock: every timestamp the stores write, and the server's `Date` header. */
  readonly clock: Clock;
  /** Signs the capability URLs Files and run streams hand out. */
  readonly signer: UrlSigner;
  readonly workspaces: WorkspaceStore;
  readonly apps: AppStore;
  readonly actions: ActionStore;
  readonly data: DataStore;
  readonly files: FileStore;
  readonly providers: ProviderStore;
  readonly models: ModelStore;
  readonly skills: SkillStore;
  readonly evals: EvalStore;
  readonly workflows: WorkflowStore;
  readonly datasets: DatasetStore;
  readonly experiments: ExperimentStore;
  readonly contexts: ContextStore;
  readonly documents: DocumentStore;
  readonly contextSources: ContextSourceStore;
  readonly sessions: SessionStore;
  readonly generations: GenerationStore;
  readonly feedback: FeedbackStore;
  readonly fineTunes: FineTuneStore;

  constructor(path = ":memory:", options: StoreOptions = {}) {
    this.clock = options.clock ?? new Clock();
    this.db = new Database(path, this.clock, options.migrations);
    const problems = TABLES.flatMap((table) => table.mismatches(this.db.sql));
    if (problems.length > 0) {
      this.db.close();
      throw new StorageMismatchError(path, problems);
    }
    this.signer = new UrlSigner(this.db);
    this.workspaces = new WorkspaceStore(this.db);
    this.apps = new AppStore(this.db, this);
    this.actions = new ActionStore(this.db, this);
    this.sessions = new SessionStore(this.db, this);
    this.data = new DataStore(this.db, this);
    this.files = new FileStore(this.db, this.signer);
    this.providers = new ProviderStore(this.db, this);
    this.models = new ModelStore(this.db, this);
    this.skills = new SkillStore(this.db, this);
    this.evals = new EvalStore(this.db, this);
    this.workflows = new WorkflowStore(this.db, this);
    this.datasets = new DatasetStore(this.db, this);
    this.experiments = new ExperimentStore(this.db, this);
    this.contexts = new ContextStore(this.db);
    this.documents = new DocumentStore(this.db, this);
    this.contextSources = new ContextSourceStore(this.db, this);
    this.generations = new GenerationStore(this.db, this);
    this.feedback = new FeedbackStore(this.db, this);
    this.fineTunes = new FineTuneStore(this.db, this, options.fineTunes);
    this.workspaces.trackUsage();
  }

  close(): void {
    this.db.close();
  }
}

export type { Caller } from "./records";
export { DatabaseVersionError, ForeignDatabaseError, MIGRATIONS, type Migration, SCHEMA_VERSION } from "./migrations";
export { StoredRowError } from "./columns";
