import { API_AREAS } from "../areas";
import { openApiRoutes } from "./openapi";
import type { RouteModule } from "./wire";

/** Every route module, each registered under `/v1`: each API area's (../areas.ts), and the OpenAPI document's. */
export const routeModules: RouteModule[] = [...Object.values(API_AREAS).map((area) => area.routes), openApiRoutes];
