/**
 * A workspace for discover to list: the emulator's KINDS_FIXTURES (Apps Support and Sales with their Actions and Data
 * records, Contexts Handbook and FAQ, configured Skills web-search and code-runner, Eval types) plus, made through
 * the API, several objects of every kind with twins of one name among them. Each fine-tune also makes its training
 * Dataset, twins too.
 */
import { expect } from "vitest";
import type { KindName } from "../../src/resources";
import type { FixtureLookups } from "../pulumi-cli/kinds-fixtures";

/** The keys the API was given, by the GUID of the connection or Model that holds each: never to be printed. */
export type Keys = Map<string, string>;

export interface Seeded {
  /** The GUIDs of every object of each kind, made through the API or by a fine-tune, the fixtures' included. */
  guids: Record<KindName, string[]>;
  /** The configured Skills (fixtures), which discover leaves out. */
  configuredSkills: string[];
  keys: Keys;
}

export async function seedWorkspace({ api, guids: fixtureGuids, data, numericId }: FixtureLookups): Promise<Seeded> {
  const { apps, actions, contexts, evalTypes } = fixtureGuids;
  const keys: Keys = new Map();
  const made = async (path: string, body: unknown): Promise<string> => {
    const answer = await api("POST", path, body);
    expect(answer.status, `POST ${path}`).toBeLessThan(300);
    return answer.body.guid as string;
  };
  const withKey = async (path: string, body: Record<string, unknown>, key: string) => {
    const guid = await made(path, { ...body, key });
    keys.set(guid, key);
    return guid;
  };

  const billing = await made("/apps", { name: "Billing", description: "Invoices" });
  const billingTwin = await made("/apps", { name: "Billing", description: null });
  const onboarding = await made("/apps", { name: "Onboarding" });

  const openai = await withKey("/providers", { provider: "openai", name: "Main" }, "sk-discover-openai-4f1c9a");
  const anthropic = await withKey("/providers", { provider: "anthropic", name: "Main" }, "sk-discover-anthropic-77d2e0");
  const mistral = await withKey("/providers", { provider: "mistral", name: "Tuning" }, "sk-discover-mistral-0b83c5");

  const models = [
    await withKey("/models", { llm: "gpt-4o", provider: "openai" }, "sk-discover-model-a-61e0aa"),
    await withKey("/models", { llm: "gpt-4o", provider: "openai" }, "sk-discover-model-b-29c4d7"),
    await withKey("/models", { llm: "claude-sonnet", provider: "anthropic" }, "sk-discover-model-c-d5a913"),
  ];

  const workflows = [
    await made("/workflows", { name: "Triage", app: billing }),
    await made("/workflows", { name: "Triage", app: onboarding }),
    await made("/workflows", { name: "Escalate", app: billing }),
  ];

  const records = data.map((record) => record.guid);
  const golden = await made("/datasets", { name: "Golden", description: "Reviewed answers", app: apps.Support, data: records.slice(0, 2) });
  const datasets = [
    golden,
    await made("/datasets", { name: "Golden", description: null, app: null }),
    await made("/datasets", { name: "Reviewed", app: billing }),
  ];

  const evals = [
    await made("/evals", { name: "Quality", action: actions["Support/Summarize"], eval_types: [{ guid: evalTypes["Exact match"] }] }),
    await made("/evals", { name: "Quality", action: actions["Support/Classify"], eval_types: [{ guid: evalTypes["Exact match"] }] }),
    await made("/evals", { name: "Safety", action: actions["Sales/Pitch"], eval_types: [{ guid: evalTypes.Toxicity }] }),
  ];

  const experiments = [
    await made("/experiments", {
      name: "Tone",
      app: apps.Support,
      primary_action: actions["Support/Summarize"],
      secondary_action: actions["Support/Classify"],
    }),
    await made("/experiments", {
      name: "Tone",
      app: apps.Sales,
      primary_action: actions["Sales/Pitch"],
      secondary_action: actions["Sales/Follow up"],
    }),
  ];

  // Copies of the configured web-search Skill: the only Skills the public interface can make.
  const skills = [await made("/skills", { name: "web-search", type: "web" }), await made("/skills", { name: "web-search", type: "web" })];

  const sources = [
    await made(`/contexts/${contexts.Handbook}/context_sources`, { url: "https://example.com/guide.md" }),
    await made(`/contexts/${contexts.Handbook}/context_sources`, { url: "https://example.org/guide.md" }),
    await made(`/contexts/${contexts.FAQ}/context_sources`, { url: "https://example.com/faq.md" }),
  ];

  const tuning = await numericId("providers", mistral);
  const tune = (name: string) =>
    made("/finetune", {
      name,
      app: apps.Support,
      dataset: golden,
      data_ids: data.slice(0, 10).map((record) => record.id),
      base_model: "gpt-4o-mini",
      workspaceModelProviderId: tuning,
    });
  const fineTunes = [await tune("Tone tune"), await tune("Tone tune")];
  const training = await Promise.all(
    fineTunes.map(async (guid) => (await api("GET", `/finetune/${guid}`)).body.training_dataset as string),
  );

  const configured = (await api("GET", "/skills")).body.data.filter((skill: { guid: string }) => !skills.includes(skill.guid));
  return {
    guids: {
      App: [...Object.values(apps), billing, billingTwin, onboarding],
      ProviderConnection: [openai, anthropic, mistral],
      Model: models,
      Workflow: workflows,
      Dataset: [...datasets, ...training],
      Eval: evals,
      Experiment: experiments,
      Skill: [...configured.map((skill: { guid: string }) => skill.guid), ...skills],
      ContextSource: sources,
      FineTune: fineTunes,
    },
    configuredSkills: configured.map((skill: { guid: string }) => skill.guid),
    keys,
  };
}
