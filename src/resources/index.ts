import type { Kind, KindName } from "../provider/kind";
import { appKind } from "./app";

export { App, type AppArgs } from "./app";

/** Every kind by name; a kind missing here is a compile error. */
export const kinds = {
  App: appKind,
} satisfies Partial<Record<KindName, Kind>> as Partial<Record<KindName, Kind>>;
