import { ACTIONS, ACTION_ENVIRONMENTS, ActionStore } from "./actions";
import type { Table } from "./columns";
import { Database } from "./database";
import { API_KEYS, FEATURE_USAGE, WORKSPACES, WORKSPACE_MEMBERS, WorkspaceStore } from "./workspaces";
import { DATA, DATA_SESSIONS, DataStore } from "./data";
import { FILES, FileStore } from "./files";
import { CONTEXTS, ContextStore } from "./contexts";
import { DOCUMENTS, DocumentStore } from "./documents";
import { SESSIONS, SessionStore } from "./sessions";
import { GENERATIONS, GenerationStore } from "./generations";
import { FEEDBACK, FeedbackStore } from "./feedback";
import { FILE_SIGNING_KEY, UrlSigner } from "./signing";
import type { Migration } from "./migrations";
import type { FineTuneOptions } from "./fine-tunes";
import type { StoreModule } from "./module";
import { STORE_MODULES } from "./modules";
import { Clock } from "../clock";

/**
 * Every table the stores read, as described next to its store (a store module's with it, ./module.ts): after the
 * migrations (./migrations.ts), and the creation of a store module's table they did not create, each must match its
 * description, or the Store does not start.
 */
export const TABLES: readonly Table[] = [
  WORKSPACES,
  WORKSPACE_MEMBERS,
  API_KEYS,
  FEATURE_USAGE,
  ACTIONS,
  ACTION_ENVIRONMENTS,
  SESSIONS,
  DATA,
  DATA_SESSIONS,
  FILES,
  FILE_SIGNING_KEY,
  CONTEXTS,
  DOCUMENTS,
  GENERATIONS,
  FEEDBACK,
  ...Object.values(STORE_MODULES).flatMap((module) => module.tables),
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

/** The stores opened by convention (./module.ts), each the field its module is listed under in ./modules.ts. */
type ModuleStores = {
  readonly [F in keyof typeof STORE_MODULES]: (typeof STORE_MODULES)[F] extends StoreModule<infer S, never, never> ? S : never;
};

// The class's fields are its own and, merged in here, the store modules', which its constructor defines.
export interface Store extends ModuleStores {}

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
  readonly actions: ActionStore;
  readonly data: DataStore;
  readonly files: FileStore;
  readonly contexts: ContextStore;
  readonly documents: DocumentStore;
  readonly sessions: SessionStore;
  readonly generations: GenerationStore;
  readonly feedback: FeedbackStore;

  constructor(path = ":memory:", options: StoreOptions = {}) {
    this.clock = options.clock ?? new Clock();
    this.db = new Database(path, this.clock, options.migrations);
    for (const module of Object.values(STORE_MODULES))
      for (const table of module.tables) if (!table.exists(this.db.sql)) this.db.sql.exec(table.creation());
    const problems = TABLES.flatMap((table) => table.mismatches(this.db.sql));
    if (problems.length > 0) {
      this.db.close();
      throw new StorageMismatchError(path, problems);
    }
    this.signer = new UrlSigner(this.db);
    this.workspaces = new WorkspaceStore(this.db);
    this.actions = new ActionStore(this.db, this);
    this.sessions = new SessionStore(this.db, this);
    this.data = new DataStore(this.db, this);
    this.files = new FileStore(this.db, this.signer);
    this.contexts = new ContextStore(this.db);
    this.documents = new DocumentStore(this.db, this);
    this.generations = new GenerationStore(this.db, this);
    this.feedback = new FeedbackStore(this.db, this);
    for (const [field, module] of Object.entries(STORE_MODULES))
      Object.defineProperty(this, field, { value: new module.open(this.db, this, options), enumerable: true });
    this.workspaces.trackUsage();
  }

  close(): void {
    this.db.close();
  }
}

export type { Caller } from "./records";
export { DatabaseVersionError, ForeignDatabaseError, MIGRATIONS, type Migration, SCHEMA_VERSION } from "./migrations";
export { StoredRowError } from "./columns";
