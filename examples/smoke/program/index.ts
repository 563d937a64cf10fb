/**
 * The smoke test's workspace: small but real, each resource read back by examples/smoke/smoke.mts.
 *
 *   App "Smoke test" ── Dataset "Greetings" ◄── Data records logged under App "Greeter"
 *   ProviderConnection "openai" (secret key) ◄── Model "gpt-4o-mini" (the service links it to the connection)
 *   Action "Greet" of "Greeter": looked up by name (Actions cannot be created through the public interface;
 *   examples/smoke/fixtures.yaml seeds the emulator with it), exported for the smoke test to run.
 *
 * Stack config: gms:baseUrl, gms:apiKey (secret), providerKey (secret).
 */
import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const config = new pulumi.Config();
const providerKey = config.requireSecret("providerKey");

const greet = gms.getActionOutput({ app: "Greeter", name: "Greet" });
const records = gms.getDataRecordsOutput({ app: "Greeter", limit: 50 });

const app = new gms.App("smoke-app", { name: "Smoke test", description: "Deployed and destroyed by the smoke test" });

const connection = new gms.ProviderConnection("openai", {
  provider: "openai",
  key: providerKey,
  nickname: "OpenAI (smoke test)",
  default: true,
});

// The service links a Model to the workspace's default connection of its provider type: create it after.
const model = new gms.Model(
  "gpt-4o-mini",
  { llm: "gpt-4o-mini", provider: "openai", key: providerKey, default: true },
  { dependsOn: [connection] },
);

const greetings = new gms.Dataset("greetings", {
  name: "Greetings",
  description: "Greetings logged by the Greeter",
  app: app.id,
  data: records.apply((list) => list.map((record) => record.guid)),
});

export const appGuid = app.guid;
export const connectionGuid = connection.guid;
export const modelGuid = model.guid;
export const modelConnection = model.providerGuid; // the connection the service linked the Model to
export const datasetGuid = greetings.guid;
export const datasetRecords = greetings.data.apply((data) => data?.length ?? 0);
export const actionGuid = greet.guid;
