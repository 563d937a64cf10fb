// SKELETON: to be written by the owner of this kind.
import type { RouteModule } from "./wire";

export const dataRoutes: RouteModule = () => {};
