/**
 * What a fine-tune create needs against the emulator: internal numeric ids of Data records and of a
 * Provider connection, which no spec route shows (the emulator's own `/_emulator/...` routes do).
 */
import { expect } from "vitest";
import { callOverHttp } from "../emulator/harness";

type Emulator = { url: string; apiKey: string };

/** The internal numeric id of a Data record or a Provider connection. */
export async function numericId(emulator: Emulator, kind: "data" | "providers", guid: string): Promise<number> {
  const answer = await callOverHttp({ ...emulator, url: emulator.url.replace(/\/v1$/, "") }, "GET", `/_emulator/${kind}/${guid}`);
  expect(answer.status).toBe(200);
  return answer.body.id as number;
}

/** Logs `count` Data records under the fixture App "Support" (its Action "Summarize"); answers the App and the records' numeric ids. */
export async function logData(emulator: Emulator, count: number): Promise<{ support: string; ids: number[] }> {
  const apps = (await callOverHttp(emulator, "GET", "/apps")).body.data as { name: string; guid: string }[];
  const support = apps.find((app) => app.name === "Support")!.guid;
  const actions = (await callOverHttp(emulator, "GET", `/apps/${support}/actions`)).body as { name: string; guid: string }[];
  const summarize = actions.find((action) => action.name === "Summarize")!.guid;
  const ids: number[] = [];
  for (let index = 0; index < count; index++) {
    const input = `ticket ${index}`;
    const logged = await callOverHttp(emulator, "POST", "/data", { action: summarize, app: support, input, output: `summary ${index}` });
    ids.push(await numericId(emulator, "data", logged.body.guid));
  }
  return { support, ids };
}

/** A new Provider connection: its GUID and its numeric id. */
export async function providerConnection(emulator: Emulator, name: string): Promise<{ guid: string; id: number }> {
  const made = await callOverHttp(emulator, "POST", "/providers", { provider: "openai", key: `sk-${name}`, name });
  expect(made.status).toBe(200);
  return { guid: made.body.guid, id: await numericId(emulator, "providers", made.body.guid) };
}

/** Starts a fine-tune of "Support" through the API (ten new Data records, a new Dataset and connection); answers the service's record. */
export async function startFineTune(emulator: Emulator, name: string): Promise<{ guid: string; name: string; status: string }> {
  const { support, ids } = await logData(emulator, 10);
  const dataset = await callOverHttp(emulator, "POST", "/datasets", { name: `${name} examples`, app: support });
  const connection = await providerConnection(emulator, `${name} connection`);
  const body = {
    name,
    app: support,
    dataset: dataset.body.guid,
    data_ids: ids,
    base_model: "gpt-4o-mini",
    workspaceModelProviderId: connection.id,
  };
  const created = await callOverHttp(emulator, "POST", "/finetune", body);
  expect(created.status).toBe(200);
  return created.body;
}
