/**
 * The one hook through which what is special to a provider's placeholders reaches the offline engines: the
 * engines, the state journal included, know no marker, id form or type token of any provider. This package's
 * hook is `gmsPlaceholders` (src/provider/window.ts), LocalEngine's default (`EngineOptions.placeholders`).
 */
import type { Props } from "./properties";

/** A create a killed run left unsettled (it may or may not have made its object), as the hook sees it. */
export interface LostCreate {
  /** The create's journal id. */
  id: string;
  type: string;
  inputs: Props;
  /** When the create was sent, and when the load found it unsettled (the engine machine's clock, ISO 8601). */
  since: string;
  until: string;
}

export interface PlaceholderHook {
  /**
   * What the provider records for a lost create: the id and outputs of the object the state then holds, as a
   * replaced object awaiting deletion (the next `up` or `destroy` deletes it); undefined forgets the create.
   */
  lostCreate(create: LostCreate): { id: string; outputs: Props } | undefined;
  /**
   * The environment variable, set in the provider's environment, naming a file of the ids the stack's state holds
   * (one a line, written once the state is loaded), so that a placeholder never takes another resource's object.
   */
  stackIdsVariable: string;
}
