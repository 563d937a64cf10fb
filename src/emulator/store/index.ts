import { ActionStore } from "./actions";
import { AppStore } from "./apps";
import { Database } from "./database";
import { WorkspaceStore } from "./workspaces";
import { DataStore } from "./data";
import { FileStore } from "./files";
import { ProviderStore } from "./providers";
import { ModelStore } from "./models";
import { SkillStore } from "./skills";
import { EvalStore } from "./evals";
import { WorkflowStore } from "./workflows";
import { DatasetStore } from "./datasets";
import { ExperimentStore } from "./experiments";
import { ContextStore } from "./contexts";
import { DocumentStore } from "./documents";
import { ContextSourceStore } from "./context-sources";
import { SessionStore } from "./sessions";
import { GenerationStore } from "./generations";
import { FeedbackStore } from "./feedback";
import { type FineTuneOptions, FineTuneStore } from "./fine-tunes";
import { UrlSigner } from "./signing";
import { Clock } from "../clock";

/** How the stores behave where the emulator can be tuned. */
export interface StoreOptions {
  fineTunes?: FineTuneOptions | undefined;
  /** The service's clock, which every record is stamped by (default: this machine's). */
  clock?: Clock | undefined;
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
    this.db = new Database(path, this.clock);
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
