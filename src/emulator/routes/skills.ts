/** `/skills`, served from src/api/skills.ts's entries (the list by hand: its quirk is not the envelope `serve` answers). */
import { z } from "zod";
import { skillEndpoints } from "../../api/skills";
import { serve } from "./serve";
import { type RouteModule, deleted, parsePage } from "./wire";

export const skillRoutes: RouteModule = (app, store) => {
  const endpoints = skillEndpoints;
  /**
   * The spec's quirk: skip and limit are accepted but not applied, `data` holds every Skill, and
   * `has_next_page` (computed as if the page had been applied) must not be relied on. Each Skill is encoded by
   * the entry's response codec.
   */
  app.get(endpoints.list.path, async (request) => {
    const page = parsePage(request);
    const skills = store.skills.list(request.caller);
    return {
      data: skills.map((skill) => z.encode(endpoints.list.response, skill)),
      total_count: skills.length,
      has_next_page: page.skip + page.limit < skills.length,
    };
  });
  serve(app, endpoints.types, ({ caller }) => store.skills.listTypes(caller));
  serve(app, endpoints.create, ({ caller, body: { metaData, ...body } }) =>
    store.skills.create(caller, { ...body, metadata: body.metadata ?? metaData }),
  );
  serve(app, endpoints.get, ({ caller, params }) => store.skills.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.skills.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Skill", store.skills.softDelete(caller, params.guid!).guid));
  serve(app, endpoints.prompt, ({ caller, params, body }) => ({ msg: store.skills.prompt(caller, params.skill!, body.prompt) }));
};
