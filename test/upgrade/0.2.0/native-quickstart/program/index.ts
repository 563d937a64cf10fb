/**
 * The quickstart: all nine kinds of pulumi-gms, wired together.
 *
 *   App "Helpdesk" ── Workflow "Triage"
 *        └──────────── Dataset "Golden answers" ◄── Data records logged under App "Support"
 *                           └── Eval "Reply quality" ──► Action "Draft reply" (of "Support")
 *   Experiment "Concise replies": "Draft reply" vs "Draft reply (concise)", in the App that owns both
 *   ProviderConnection "openai" (secret key) ◄── Model "gpt-4o-mini" (the service links it to the connection)
 *   Skill "web-search";  ContextSource: handbook.md uploaded into the Context "Handbook" and indexed
 *
 * Actions, Data records, Contexts, Eval types and configured Skills cannot be created through the public
 * interface, so the program looks them up by name (examples/quickstart/fixtures.yaml seeds the emulator
 * with them; on a real workspace, set the names below through stack config).
 *
 * Stack config: gms:baseUrl, gms:apiKey (secret), openaiKey (secret); optional: appDescription and the
 * names of what is looked up (supportApp, primaryAction, secondaryAction, context, evalType, skill).
 */
import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const config = new pulumi.Config();
const openaiKey = config.requireSecret("openaiKey");
const supportApp = config.get("supportApp") ?? "Support";

// Looked up by name: configured outside the public interface.
const draft = gms.native.getActionOutput({ app: supportApp, name: config.get("primaryAction") ?? "Draft reply" });
const concise = gms.native.getActionOutput({ app: supportApp, name: config.get("secondaryAction") ?? "Draft reply (concise)" });
const records = gms.native.getDataRecordsOutput({ app: supportApp, limit: 50 });
const handbook = gms.native.getContextOutput({ name: config.get("context") ?? "Handbook" });
const exactMatch = gms.native.getEvalTypeOutput({ name: config.get("evalType") ?? "Exact match" });

// References use `.id` (the object's GUID): unlike the other outputs, it is known while an update is only
// previewed, so a change to the App previews as that one update rather than as changes to its dependents.
const app = new gms.native.App("helpdesk", {
  name: "Helpdesk",
  description: config.get("appDescription") ?? "Answers customer questions",
});

const triage = new gms.native.Workflow("triage", { name: "Triage", app: app.id });

const connection = new gms.native.ProviderConnection("openai", {
  provider: "openai",
  key: openaiKey,
  nickname: "OpenAI (production)",
  default: true,
});

// The service links a Model to the workspace's default connection of its provider type: create it after.
const model = new gms.native.Model(
  "gpt-4o-mini",
  { llm: "gpt-4o-mini", provider: "openai", key: openaiKey, default: true },
  { dependsOn: [connection] },
);

const golden = new gms.native.Dataset("golden-answers", {
  name: "Golden answers",
  description: "Answers a human checked",
  app: app.id,
  data: records.apply((list) => list.map((record) => record.guid)),
});

const quality = new gms.native.Eval("reply-quality", {
  name: "Reply quality",
  action: draft.guid,
  evalTypes: [{ guid: exactMatch.guid }],
  dataset: golden.id,
});

const experiment = new gms.native.Experiment("concise-replies", {
  name: "Concise replies",
  app: draft.app, // the App that owns both Actions
  primaryAction: draft.guid,
  secondaryAction: concise.guid,
});

const search = new gms.native.Skill("web-search", { name: config.get("skill") ?? "web-search", type: "web" });

const handbookSource = new gms.native.ContextSource("handbook", {
  context: handbook.guid,
  file: new pulumi.asset.FileAsset("handbook.md"),
  splitterConfig: { chunkSize: 400, chunkOverlap: 40 },
  process: true,
  waitForIndexing: { timeoutSeconds: 120 },
});

export const appGuid = app.guid;
export const appSlug = app.slug;
export const appDescription = app.description;
export const workflowSlug = triage.slug;
export const connectionGuid = connection.guid;
export const providerKey = connection.key; // a secret: shown as [secret]
export const modelConnection = model.providerGuid; // the connection the service linked the Model to
export const datasetGuid = golden.guid;
export const datasetRecords = golden.data.apply((data) => data?.length ?? 0);
export const evalDataType = quality.dataType;
export const experimentStatus = experiment.status;
export const skillGuid = search.guid;
export const handbookStatus = handbookSource.indexingStatus;
export const handbookDocuments = handbookSource.indexingMetadata.apply((metadata) => metadata?.documents ?? null);
