import type { Table } from "./columns";
import type { Database } from "./database";

/**
 * A store the Store opens by convention: a store module exports `const <name> = storeModule(TheStore, [TABLE, ...])`
 * and is the Store's field named after the module's file (./fine-tunes.ts: `store.fineTunes`), listed by ./modules.ts,
 * which `npm run build` writes. Its tables are among `TABLES`, and one the migrations did not create is created from
 * its description when the Store opens (./migrations.ts says when a migration must create it instead).
 */
export interface StoreModule<S, Needs, Options> {
  /**
   * The store's class, constructed with the database, the Store (as the other stores it calls, read when called) and
   * the Store's options (./index.ts `StoreOptions`).
   */
  readonly open: new (
    db: Database,
    store: Needs,
    options: Options,
  ) => S;
  readonly tables: readonly Table[];
}

export const storeModule = <S, Needs, Options>(
  open: new (db: Database, store: Needs, options: Options) => S,
  tables: readonly Table[],
): StoreModule<S, Needs, Options> => ({ open, tables });
