/**
 * ContextSource: a loader and splitter configuration that populates a Context with Documents. The
 * source is a `url` the service fetches, or a `file` (a Pulumi asset) uploaded through `/files/upload`
 * just before create; either one fixes the object, so changing it replaces the source. Name, loader
 * configuration and splitter configuration change in place (one PUT that replaces all three).
 * Processing only dispatches work: `waitForIndexing` polls the indexing status until it settles.
 *
 * Its calls are derived from its endpoint entries (src/api/context-sources.ts), every route under its Context
 * (`pathBy`): the POST, the lost-create lookup of a url-backed source (its Context's sources of that url), the GET
 * and the DELETE. Each operation is more than that call, so each is an override built on it: create uploads a
 * `file` first, names a missing Context, then sets the configuration and processes (undone on failure); the lookup
 * of a file-backed source matches the hashed signed URL its placeholder recorded; read and delete find the
 * Context when the state has none (or, adopting, another). Update stays hand-written, not on the derived one: its
 * PUT requires all three of name, loaderConfig and splitterConfig (live values fill those the program leaves
 * out), takes the splitter as any object (so its keys are encoded here, not by the codec, which must not narrow
 * what the emulator accepts), is also create's second step, and is followed by processing.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import {
  ContextSourceCreate,
  type ContextSourceRecord,
  contextSourceEndpoints,
  contextSourcesApi,
  FILES_LOADER_ID,
  LoaderConfigItem,
} from "../api/context-sources";
import { filesApi } from "../api/files";
import { workspacesApi } from "../api/workspaces";
import { describeTimeout, type GmsClient, MayExistError, NotFoundError, operationTimeout, timeLeft, ValidationError } from "../client";
import { type InputValues, computed, replaceOnly, updatable } from "../provider/fields";
import type { CheckFailure } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import { Name } from "../provider/workspace-form";
import { failure, failureText, ProviderError, codeOf } from "../provider/errors";
import { type Candidate, type Placeholder, placeholderIdentity } from "../provider/provider";
import { abandonCreate } from "../provider/undo-create";
import * as shim from "../shims/context-source";

const FILES_LOADER = "files";

/** What `waitForIndexing: true` waits at most. */
export const DEFAULT_WAIT_SECONDS = 300;
const MAX_WAIT_SECONDS = 3600;
/** Polling starts fast (the emulator indexes small files in milliseconds) and backs off to this cap. */
const FIRST_POLL_MS = 200;
const MAX_POLL_MS = 5000;

const EMPTY_SHA256 = createHash("sha256").digest("hex");
/** A file-backed placeholder's identity (`Placeholder.identity`): the SHA-256 of the upload's signed URL its POST sent. */
const UPLOADED_URL_SHA256 = "uploadedUrlSha256";
const sha256 = (content: Uint8Array | string): string => createHash("sha256").update(content).digest("hex");

/**
 * The `file` input as state keeps it: where the content comes from plus its SHA-256, so that a changed
 * content is a changed value (and replaces the source) while an unchanged file diffs equal.
 */
export type FileContent = { path: string; hash: string } | { text: string; hash: string };

const ASSET_ADVICE = "pass new pulumi.asset.FileAsset(path) or new pulumi.asset.StringAsset(text)";

/**
 * Reads the asset as the dynamic-provider host receives it: the engine serializes an asset as a plain
 * object tagged `{[specialSigKey]: specialAssetSig}` with a path, text or uri (and its hash).
 * The already-normalized `{path, hash}` / `{text, hash}` of earlier state is accepted too. A path is
 * relative to the program directory, the host's working directory.
 */
function normalizeFile(value: unknown, ctx: z.RefinementCtx): FileContent {
  const fail = (message: string) => {
    ctx.addIssue({ code: "custom", message });
    return z.NEVER;
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail(`must be a Pulumi asset: ${ASSET_ADVICE}`);
  const asset = value as Record<string, unknown>;
  const signature = asset[pulumi.runtime.specialSigKey];
  if (signature !== undefined && signature !== pulumi.runtime.specialAssetSig) {
    return fail(`must be a single file, not an archive or another special value: ${ASSET_ADVICE}`);
  }
  if (typeof asset.uri === "string") {
    return fail(`a RemoteAsset is not supported: pass its address as url (the service fetches it), or ${ASSET_ADVICE}`);
  }
  if (typeof asset.text === "string") {
    if (asset.text === "") return fail("the StringAsset is empty: there is nothing to upload and index");
    return { text: asset.text, hash: sha256(asset.text) };
  }
  if (typeof asset.path === "string" && asset.path !== "") {
    const location = asset.path;
    const full = resolve(location);
    let content: Buffer;
    try {
      if (statSync(full).isDirectory()) return fail(`${location} is a directory; a Context Source takes one file`);
      content = readFileSync(full);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return fail(
        code === "ENOENT"
          ? `file ${location} does not exist (looked for ${full})`
          : `cannot read file ${location}: ${(error as Error).message}`,
      );
    }
    if (content.length === 0) return fail(`file ${location} is empty: there is nothing to upload and index`);
    return { path: location, hash: sha256(content) };
  }
  // An empty StringAsset travels as its hash alone (the engine drops the empty text).
  if (signature !== undefined && asset.hash === EMPTY_SHA256) return fail("the StringAsset is empty: there is nothing to upload and index");
  return fail(`must be a Pulumi asset with a path or text: ${ASSET_ADVICE}`);
}

const FileInput = z
  .custom<pulumi.asset.Asset>(() => true)
  .transform(normalizeFile)
  .meta({ pulumiType: "pulumi.json#/Asset" });

const Loader = z.string().transform((value, ctx) => {
  const canonical = value.trim().toLowerCase();
  if (canonical === FILES_LOADER || canonical === FILES_LOADER_ID) return FILES_LOADER;
  ctx.addIssue({
    code: "custom",
    message:
      `"${value}" is not available: only the Files loader exists (the service's create always ` +
      `fixes the Files loader and no route chooses another). Use "files" or leave loader out.`,
  });
  return z.NEVER;
});

const SplitterConfig = z.strictObject({
  chunkSize: z.number().int().positive(),
  chunkOverlap: z.number().int().nonnegative().default(0),
});

const WaitForIndexing = z.union([
  z.boolean(),
  z.strictObject({ timeoutSeconds: z.number().positive().max(MAX_WAIT_SECONDS, `must be at most ${MAX_WAIT_SECONDS} (one hour)`) }),
]);

export const contextSourceKind = restKind(
  {
    name: "ContextSource",
    description:
      "A Context Source: a loader and splitter configuration that populates a Context with Documents from one file, given as a url the service " +
      "fetches or as a Pulumi asset uploaded on create. Processing runs in the service after dispatch; `waitForIndexing` waits for it to finish.",
    quirks: [
      "Deleting a Context Source keeps the Documents it loaded in its Context: the service does not cascade the delete.",
      "Create always uses the Files loader, with an empty loader configuration; no other loader can be chosen.",
      "Processing only dispatches work: the outcome is read from `indexingStatus` and `indexingMetadata` (`waitForIndexing` waits for it).",
      "A file's signed URL expires 10 minutes after the upload, so a file-backed source can be processed again only within that time.",
    ],
    workspaceSection: "Context Sources, by logical name.",
    identity: [["context", "url"]],
    inputs: {
      context: replaceOnly(Guid, "The GUID of the Context the source populates. Contexts are created outside the interface.", {
        required: true,
      }),
      url: replaceOnly(
        ContextSourceCreate.in.shape.url,
        "The http(s) address the service fetches (it must be reachable from the service). Set exactly one of `url` and `file`. " +
          "Changing it replaces the source.",
      ),
      file: replaceOnly(
        FileInput,
        "A Pulumi asset (`FileAsset`, a path relative to the program directory, or `StringAsset`) uploaded through " +
          "`/files/upload` just before create; the source then reads the upload's signed URL (see `sourceUrl`). Set exactly " +
          "one of `url` and `file`. A change of its content (SHA-256) or path replaces the source. The signed URL " +
          "expires 10 minutes after upload, so a file-backed source can only be processed again within that time; change " +
          "the file to upload it anew.",
        { writeOnly: true },
      ),
      loader: replaceOnly(Loader, 'The loader; only the Files loader ("files", or its GUID) exists, and create always uses it.', {
        default: FILES_LOADER,
      }),
      name: updatable(
        z.string().min(1, "must not be empty"),
        "The source's name. When left out Pulumi leaves it alone: the service names a new source " +
          "after the last segment of its url, and a `FileAsset` source is named after its file.",
      ),
      loaderConfig: updatable(
        z.array(
          z.strictObject({
            name: LoaderConfigItem.shape.name.min(1, "must not be empty"),
            value: LoaderConfigItem.shape.value,
            required: z.boolean().optional(),
          }),
        ),
        "Loader settings as `{name, value, required?}` entries. When left out Pulumi leaves them alone (a new source starts with none).",
      ),
      splitterConfig: updatable(
        SplitterConfig,
        "How loaded text is cut into Documents: `chunkSize` characters per Document, consecutive ones sharing `chunkOverlap` " +
          "characters (default 0). When left out Pulumi leaves it alone (the service's default applies to a new source).",
      ),
      process: updatable(
        z.boolean(),
        "Start processing (loading, splitting, replacing the source's Documents) after create, and after every update that changes " +
          "name, loaderConfig or splitterConfig, or that turns `process` on. Processing runs in the service; see `waitForIndexing`.",
        { writeOnly: true },
      ),
      waitForIndexing: updatable(
        WaitForIndexing,
        `After dispatching processing, wait until \`indexingStatus\` is \`indexed\` (or ` +
          `fail when it is \`failed\`): \`true\` waits up to ${DEFAULT_WAIT_SECONDS} ` +
          `s, \`{timeoutSeconds}\` up to that many (at most ${MAX_WAIT_SECONDS}). Needs \`process: true\`. ` +
          "A create that fails or times out here deletes the new source.",
        { writeOnly: true },
      ),
    },
    outputs: {
      guid: computed(z.string(), "The Context Source's GUID."),
      sourceUrl: computed(
        z.string(),
        "The URL the service loads from: `url`, or the signed URL of the uploaded `file` (valid 10 " +
          "minutes from upload). A secret: a signed URL grants read access to the file while it is valid.",
        { secret: true },
      ),
      loaderId: computed(z.string(), "The GUID of the loader the service uses (always the Files loader)."),
      indexingStatus: computed(
        z.string(),
        "`pending` until processed, then `processing`, then `indexed` or `failed`. Changes on its own; never causes a diff.",
      ),
      indexedAt: computed(z.string().nullable(), "When the source was last indexed (ISO 8601), or null."),
      indexingMetadata: computed(
        z.record(z.string(), z.unknown()).nullable(),
        "What the last finished run recorded: `{documents, characters, contentType}` once indexed, `{error}` once failed; null before.",
      ),
      createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
      updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
    },
    workspace: {
      form: () => ({
        context: Name.describe(
          "The name of the Context the source populates (Contexts are created outside the public interface). Another Context replaces the source.",
        ),
        file: Name.describe(
          "A file uploaded on create, by its path relative to this document. Set exactly " +
            "one of `url` and `file`. A change of its content or path replaces the source.",
        ),
      }),
      toArgs: (_key, entry, context) => {
        const { context: contextName, file, ...fields } = entry;
        return {
          args: { ...fields, context: context.contextGuid(contextName), ...(file === undefined ? {} : { file: context.file(file) }) },
        };
      },
    },
    validate(inputs) {
      const failures: CheckFailure[] = [];
      if (inputs.url !== undefined && inputs.file !== undefined) {
        const reason = "set either url or file, not both: url is an address the service fetches, file is an asset uploaded on create";
        failures.push({ property: "url", reason }, { property: "file", reason });
      } else if (inputs.url === undefined && inputs.file === undefined) {
        const reason =
          "a ContextSource needs its content: set url (an http(s) address the service fetches) or file (a Pulumi asset to upload)";
        failures.push({ property: "url", reason }, { property: "file", reason });
      }
      if (inputs.waitForIndexing !== undefined && inputs.waitForIndexing !== false && inputs.process !== true) {
        failures.push({
          property: "waitForIndexing",
          reason:
            "waits for processing, which only starts with process: true (without it the source stays pending and the wait could only time out)",
        });
      }
      return failures;
    },
  },
  contextSourceEndpoints,
  {
    label: (inputs) => `ContextSource for ${sourceLabel(inputs)}`,
    pathBy: { contextGuid: "context" },
    async explain(client, error, operation, inputs) {
      if (operation === "update") return error;
      const advice = error instanceof NotFoundError ? await whatContextsExist(client, inputs.context!) : undefined;
      return failure(`Cannot create ContextSource for ${sourceLabel(inputs)}`, error, advice);
    },
    overrides: (derived) => ({
      async create(client, inputs) {
        const context = inputs.context!;
        const what = sourceLabel(inputs);
        const url = inputs.file ? await upload(client, inputs.file) : inputs.url!;
        let created: ContextSourceRecord;
        try {
          // The url is this create's own (a fresh signed URL for an uploaded file): it identifies the new source.
          created = (await derived.create(client, { ...inputs, url })) as ContextSourceRecord;
        } catch (failed) {
          // No input holds an uploaded file's signed URL: the placeholder records it, hashed (the URL grants access while valid).
          if (inputs.file && failed instanceof MayExistError && failed.made.state === "unresolved") {
            const window: Placeholder = { ...failed.made.window, identity: { [UPLOADED_URL_SHA256]: sha256(url) } };
            throw new MayExistError(failed.message, { ...failed.made, window }, { cause: failed.cause });
          }
          throw failed;
        }
        // From here on the source exists: any failure deletes it again, so a failed create leaves nothing behind.
        try {
          let record = created;
          const name = nameOnCreate(inputs);
          if (name !== undefined || inputs.loaderConfig !== undefined || inputs.splitterConfig !== undefined) {
            record = await putConfig(
              client,
              context,
              created.guid,
              { name, loaderConfig: inputs.loaderConfig, splitterConfig: inputs.splitterConfig },
              created,
            );
          }
          if (inputs.process) record = await processAndObserve(client, context, record.guid, inputs, what);
          return toOutputs(record, context, inputs.file !== undefined);
        } catch (error) {
          return abandonCreate({
            remove: () => derived.delete(client, created.guid, { context }),
            kindLabel: "Context Source",
            guid: created.guid,
            message: `Cannot create ContextSource for ${what}: ${reason(error)}`,
            record: toOutputs(created, context, inputs.file !== undefined),
          });
        }
      },
      async findCreated(client, inputs): Promise<Candidate[]> {
        if (inputs.url !== undefined) return derived.findCreated(client, inputs);
        // A file-backed source: its placeholder recorded the upload's signed URL (see create), which the source keeps.
        const uploaded = placeholderIdentity(inputs)?.[UPLOADED_URL_SHA256];
        const sources = await contextSourcesApi.list(client, inputs.context!);
        if (uploaded !== undefined) {
          return sources
            .filter((source) => sha256(source.url) === uploaded)
            .map((source) => ({ guid: source.guid, createdAt: source.createdAt }));
        }
        // Recorded without it (an engine's journal of a create under way, a checkpoint's pending create): the create
        // names its source right after the POST, so a source of that name is identified by it, as an App by its name.
        // Another is one whose create stopped before naming it when the file its URL still serves has the asset's
        // bytes, and is not when it has other bytes; a file that cannot be read any more leaves it in doubt.
        const name = nameOnCreate(inputs);
        const doubt = `nothing recorded identifies the file uploaded for ${sourceLabel(inputs)}, so any source of the Context made then may be it`;
        const found = await Promise.all(
          sources.map(async (source) => {
            const candidate = { guid: source.guid, createdAt: source.createdAt };
            if (name !== undefined && source.name === name) return candidate;
            const content = inputs.file ? await client.readSignedFile(source.url) : undefined;
            if (content === undefined) return { ...candidate, doubt };
            return sha256(content) === inputs.file!.hash ? candidate : undefined;
          }),
        );
        return found.filter((candidate) => candidate !== undefined);
      },
      async read(client, guid, state) {
        const fileBacked = state.file !== undefined;
        const known = state.context as string | undefined;
        if (known) {
          try {
            return toOutputs((await derived.read(client, guid, state)) as ContextSourceRecord, known, fileBacked);
          } catch (error) {
            // Adopting reads with the program's Context, which may not be the source's: look for it.
            if (!(error instanceof NotFoundError)) throw error;
          }
        }
        const context = await contextSourcesApi.contextOf(client, guid);
        return toOutputs((await derived.read(client, guid, { ...state, context })) as ContextSourceRecord, context, fileBacked);
      },
      async update(client, guid, news, changed, state) {
        const context = news.context!;
        const what = sourceLabel({ ...news, file: news.file ?? (state.file as FileContent | undefined) });
        let record: ContextSourceRecord | undefined;
        const configChanged = (["name", "loaderConfig", "splitterConfig"] as const).some((field) => changed.has(field));
        try {
          if (configChanged) {
            // The PUT replaces all three: a field the program leaves out keeps its live value.
            const declaredAll = news.name !== undefined && news.loaderConfig !== undefined && news.splitterConfig !== undefined;
            const live = declaredAll ? undefined : await contextSourcesApi.get(client, context, guid);
            record = await putConfig(
              client,
              context,
              guid,
              { name: news.name, loaderConfig: news.loaderConfig, splitterConfig: news.splitterConfig },
              live,
            );
          }
          if (news.process === true && (configChanged || changed.has("process")))
            record = await processAndObserve(client, context, guid, news, what);
        } catch (error) {
          // A 404 may mean the source was deleted outside Pulumi: the provider reads it to tell the user so.
          if (error instanceof NotFoundError) throw error;
          throw new ProviderError(codeOf(error), `Cannot update ContextSource ${guid} (${what}): ${reason(error)}`);
        }
        return record ? toOutputs(record, context, (news.file ?? state.file) !== undefined) : state;
      },
      async delete(client, guid, state) {
        // A state without its Context (an object imported by its GUID alone) finds it.
        await derived.delete(client, guid, state.context ? state : { ...state, context: await contextSourcesApi.contextOf(client, guid) });
      },
    }),
  },
);

type Inputs = InputValues<(typeof contextSourceKind)["inputs"]>;
type Config = { name: string | undefined; loaderConfig: Inputs["loaderConfig"]; splitterConfig: Inputs["splitterConfig"] };

/**
 * An error of a later step, already explained in the user's terms, or a request failure to describe. A
 * 404 stays the client's error, so that an update can tell a source deleted outside Pulumi.
 */
/** A wait for indexing that ran out (docs/troubleshooting.md quotes it). */
export const notIndexedMessage = (what: string, elapsedSeconds: string, status: string, polls: number, raise: string): string =>
  `processing ${what} had not finished after ${elapsedSeconds} s (indexing_status still "${status}" after ${polls} checks); processing ` +
  `continues in the service. ${raise}, or drop waitForIndexing and watch indexingStatus after a refresh.`;

class StepError extends Error {
  override readonly name = "StepError";
}
const reason = (error: unknown): string => (error instanceof StepError ? error.message : `${failureText(error)}.`);

/** The name a create gives its source: the declared one, else the file's own. */
const nameOnCreate = (inputs: Inputs): string | undefined =>
  inputs.name ?? (inputs.file && "path" in inputs.file ? basename(inputs.file.path) : undefined);

/** How errors name the source: never by a signed URL, which is a credential for its lifetime. */
function sourceLabel(inputs: { url?: string | undefined; file?: FileContent | undefined }): string {
  if (inputs.file) return "path" in inputs.file ? `file ${inputs.file.path}` : "a StringAsset";
  return inputs.url ?? "its source";
}

/** PUT with all three fields the service requires: declared values, else the live record's. */
async function putConfig(
  client: GmsClient,
  context: string,
  guid: string,
  config: Config,
  live: ContextSourceRecord | undefined,
): Promise<ContextSourceRecord> {
  const splitter = config.splitterConfig;
  const full = {
    name: config.name ?? live!.name,
    loaderConfig: config.loaderConfig ?? live!.loaderConfig,
    splitterConfig: splitter ?? live!.splitterConfig,
  };
  try {
    return await contextSourcesApi.update(client, context, guid, full);
  } catch (error) {
    if (error instanceof NotFoundError) throw error;
    if (error instanceof ValidationError && splitter && /splitter/i.test(error.detail)) {
      throw new StepError(
        `the service rejected splitterConfig {chunkSize: ${splitter.chunkSize}, chunkOverlap: ${splitter.chunkOverlap}} ` +
          `(${failureText(error)}); chunkSize must be a positive whole number and chunkOverlap a smaller non-negative one.`,
      );
    }
    throw new StepError(`setting name, loaderConfig and splitterConfig failed: ${failureText(error)}.`);
  }
}

/** Dispatches processing, then reads the source back: waits for the outcome when asked, else one GET. */
async function processAndObserve(
  client: GmsClient,
  context: string,
  guid: string,
  inputs: Inputs,
  what: string,
): Promise<ContextSourceRecord> {
  try {
    await contextSourcesApi.process(client, context, guid);
  } catch (error) {
    if (error instanceof NotFoundError) throw error;
    throw new StepError(`starting processing failed: ${failureText(error)}.`);
  }
  const wait = inputs.waitForIndexing;
  if (wait === undefined || wait === false) return contextSourcesApi.get(client, context, guid);
  return waitForIndexing(
    client,
    context,
    guid,
    wait === true ? DEFAULT_WAIT_SECONDS : wait.timeoutSeconds,
    what,
    inputs.file !== undefined,
  );
}

/** Polls until the indexing status settles: `indexed` returns the record, `failed` and the deadline throw. */
async function waitForIndexing(
  client: GmsClient,
  context: string,
  guid: string,
  timeoutSeconds: number,
  what: string,
  fileBacked: boolean,
): Promise<ContextSourceRecord> {
  const started = Date.now();
  // The engine's timeout for the step (customTimeouts), when it comes first, bounds the wait as timeoutSeconds does.
  const bound = operationTimeout();
  const ownDeadline = started + timeoutSeconds * 1000;
  const deadline = Math.min(ownDeadline, started + timeLeft());
  let delay = FIRST_POLL_MS;
  let polls = 0;
  for (;;) {
    const record = await contextSourcesApi.get(client, context, guid);
    polls += 1;
    if (record.indexingStatus === "indexed") return record;
    if (record.indexingStatus === "failed") {
      const error = record.indexingMetadata && "error" in record.indexingMetadata ? record.indexingMetadata.error : "no reason recorded";
      const expiry =
        fileBacked && /\b403\b/.test(error)
          ? " The signed URL of an uploaded file expires 10 minutes after upload: change the file (which uploads it anew) to process it again."
          : "";
      throw new StepError(`processing ${what} failed: ${error}.${expiry}`);
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      const elapsed = ((Date.now() - started) / 1000).toFixed(1);
      const raise =
        bound && deadline < ownDeadline ? `Raise ${describeTimeout(bound)}, which ran out first` : "Raise waitForIndexing.timeoutSeconds";
      throw new StepError(notIndexedMessage(what, elapsed, record.indexingStatus, polls, raise));
    }
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}

/** Uploads the asset's bytes (a data URL when the extension names a type) and returns the signed URL. */
async function upload(client: GmsClient, file: FileContent): Promise<string> {
  let content: Buffer;
  let mimeType: string | undefined;
  if ("text" in file) {
    content = Buffer.from(file.text, "utf8");
    mimeType = "text/plain;charset=utf-8";
  } else {
    try {
      content = readFileSync(resolve(file.path));
    } catch (error) {
      throw new ProviderError(
        "file_unreadable",
        `Cannot create ContextSource: file ${file.path} can no longer be read (${(error as Error).message}).`,
      );
    }
    mimeType = MIME_TYPES[extname(file.path).toLowerCase()];
  }
  if (sha256(content) !== file.hash) {
    throw new ProviderError(
      "file_changed",
      `Cannot create ContextSource: ${sourceLabel({ file })} changed after Pulumi checked ` +
        `it; run the update again so that state records the content that is uploaded.`,
    );
  }
  try {
    return await filesApi.upload(client, content, mimeType);
  } catch (error) {
    throw new ProviderError(
      codeOf(error),
      `Cannot create ContextSource: uploading ${sourceLabel({ file })} through /files/upload failed: ${failureText(error)}.`,
    );
  }
}

/** Types the Files loader reads as text; any other extension is uploaded as plain base64 for the service to recognise. */
const MIME_TYPES: Record<string, string> = {
  ".txt": "text/plain",
  ".text": "text/plain",
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".csv": "text/csv",
  ".tsv": "text/tab-separated-values",
  ".html": "text/html",
  ".htm": "text/html",
  ".xml": "text/xml",
  ".yaml": "text/yaml",
  ".yml": "text/yaml",
  ".json": "application/json",
  ".pdf": "application/pdf",
};

/** The workspace's Contexts, named for an error about a Context that does not exist. */
async function whatContextsExist(client: GmsClient, context: string): Promise<string> {
  const explanation = `Context ${context} may not exist in this workspace; Contexts are created outside the interface.`;
  try {
    const contexts = await workspacesApi.currentContexts(client);
    const list = contexts.length > 0 ? contexts.map((item) => `"${item.name}" (${item.guid})`).join(", ") : "none";
    return `${explanation} The workspace's Contexts: ${list}.`;
  } catch {
    return explanation;
  }
}

/** The record as outputs; a file-backed source keeps `url` out (its signed URL is `sourceUrl`, not an input). */
function toOutputs(source: ContextSourceRecord, context: string, fileBacked: boolean) {
  return {
    guid: source.guid,
    context,
    ...(fileBacked ? {} : { url: source.url }),
    sourceUrl: source.url,
    // Create fixes the Files loader; loaderId shows the GUID the service gives it.
    loader: FILES_LOADER,
    loaderId: source.loaderId,
    name: source.name,
    loaderConfig: source.loaderConfig,
    splitterConfig: source.splitterConfig,
    indexingStatus: source.indexingStatus,
    indexedAt: source.indexedAt,
    indexingMetadata: source.indexingMetadata,
    createdAt: source.createdAt,
    updatedAt: source.updatedAt,
  };
}

export type ContextSourceArgs = KindArgs<typeof contextSourceKind>;
export interface ContextSource extends KindOutputs<typeof contextSourceKind> {}
export class ContextSource extends GmsResource {
  constructor(name: string, args: ContextSourceArgs, opts?: pulumi.CustomResourceOptions) {
    super(contextSourceKind, shim, name, args, opts);
  }
}
