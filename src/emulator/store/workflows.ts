// SKELETON: to be written by the owner of this kind.
import type { Database } from "./database";
import type { Store } from "./index";

export class WorkflowStore {
  constructor(
    private readonly db: Database,
    private readonly store: Store,
  ) {}
}
