import type { Skill, SkillPromptResponse, SkillType } from "../../api/skills";
import { SkillCreate, SkillPrompt, SkillUpdate } from "../../api/skills";
import type { SkillRecord, SkillTypeRecord } from "../store/skills";
import { type RouteModule, deleted, guidParam, params, parseBody, parsePage, presentAudit } from "./wire";

export const presentSkill = (skill: SkillRecord): Skill => ({
  guid: skill.guid,
  name: skill.name,
  type: skill.type,
  metadata: skill.metadata,
  ...presentAudit(skill),
});

const presentSkillType = (type: SkillTypeRecord): SkillType => ({ name: type.name, metadata: type.metadata });

export const skillRoutes: RouteModule = (app, store) => {
  /**
   * The spec's quirk: skip and limit are accepted but not applied, `data` holds every Skill, and
   * `has_next_page` (computed as if the page had been applied) must not be relied on.
   */
  app.get("/skills", async (request) => {
    const page = parsePage(request);
    const skills = store.skills.list(request.caller);
    return { data: skills.map(presentSkill), total_count: skills.length, has_next_page: page.skip + page.limit < skills.length };
  });

  app.get("/skills/types", async (request) => store.skills.listTypes(request.caller).map(presentSkillType));

  app.post("/skills", async (request) => {
    const { meta_data, ...body } = parseBody(SkillCreate, request);
    return presentSkill(store.skills.create(request.caller, { ...body, metadata: body.metadata ?? meta_data }));
  });

  app.get("/skills/:guid", async (request) => presentSkill(store.skills.get(request.caller, guidParam(request))));

  app.put("/skills/:guid", async (request) => {
    const guid = guidParam(request);
    return presentSkill(store.skills.update(request.caller, guid, parseBody(SkillUpdate, request)));
  });

  // Spec: not shown; the emulator answers the delete message the spec shows for Providers.
  app.delete("/skills/:guid", async (request) => deleted("Skill", store.skills.softDelete(request.caller, guidParam(request)).guid));

  app.post("/skills/:skill/prompt", async (request): Promise<SkillPromptResponse> => {
    const { skill } = params(request, "skill");
    return { msg: store.skills.prompt(request.caller, skill, parseBody(SkillPrompt, request).prompt) };
  });
};
