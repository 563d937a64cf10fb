/** `/skills`, served from src/api/skills.ts's entries. */
import { skillEndpoints } from "../../api/skills";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

export const skillRoutes: RouteModule = (app, store) => {
  const endpoints = skillEndpoints;
  // The spec's quirk: the list ignores skip and limit (its entry's form is `unpaged`).
  serve(app, endpoints.list, ({ caller }) => store.skills.list(caller));
  serve(app, endpoints.types, ({ caller }) => store.skills.listTypes(caller));
  serve(app, endpoints.create, ({ caller, body: { metaData, ...body } }) =>
    store.skills.create(caller, { ...body, metadata: body.metadata ?? metaData }),
  );
  serve(app, endpoints.get, ({ caller, params }) => store.skills.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.skills.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Skill", store.skills.softDelete(caller, params.guid!).guid));
  serve(app, endpoints.prompt, ({ caller, params, body }) => ({ msg: store.skills.prompt(caller, params.skill!, body.prompt) }));
};
