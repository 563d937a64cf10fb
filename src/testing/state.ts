/**
 * The state file of the offline engine: one JSON document with the stack outputs and every resource in
 * creation order (URN, type, name, ID, parent, dependencies, inputs and outputs with their `__provider`
 * text, additional secret outputs). A secret is stored as Pulumi's checkpoints store it,
 * `{"4dabf1…": "1b4706…", "ciphertext": "v1:<nonce>:<data>"}`: AES-256-GCM under a key derived with
 * scrypt from the passphrase (the `secretsPassphrase` option or PULUMI_CONFIG_PASSPHRASE) and a random
 * salt kept in the file. Pulumi's passphrase provider derives its key with PBKDF2 instead, so the two
 * formats are not interchangeable; neither ever holds a secret in plaintext.
 *
 * Checkpoints are a journal beside the file (`<file>.journal`, one JSON line per change: a resource put,
 * a resource dropped, the stack outputs), so each step writes only what it changed; the file itself is
 * written once at the end of an operation (and not at all when nothing changed), and the journal removed.
 * A run killed midway leaves the file and the journal: the next load replays the journal, so the next run
 * starts from everything that happened. A create is journaled before it is sent (`creating`) and settled
 * with the checkpoint that records its result; a create the kill left unsettled may or may not have made
 * its object, so the load hands it to the `lostCreate` hook (placeholder-hook.ts), which answers what its provider
 * records for a create whose answer was lost (LocalEngine's is this package's placeholder, src/provider/window.ts):
 * that is recorded as a replaced object awaiting deletion, which the next `up` or `destroy` deletes. Without a
 * hook, or when it answers nothing, the create is forgotten. Its times are read from the `clock` option.
 *
 * Whatever moment a kill picks, the file and journal it leaves load: the file is replaced by a rename, a
 * torn last line of the journal is ignored (and cut off before the next append, so it never ends up in the
 * middle), and every secret sealed in the journal can be opened. For that last point a file has one key:
 * it is derived once, by the first caller that needs it, and every caller that asks meanwhile waits for
 * that derivation instead of making a salt of its own; the header that records its salt goes into the
 * journal in the same append as the first entry sealed with it, and entries are sealed in their turn in
 * the write queue, so no sealed entry ever precedes its header. (The load reads every header before it
 * opens any secret all the same.)
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt } from "node:crypto";
import { closeSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { type Clock, systemClock } from "../provider/clock";
import { EngineError } from "./errors";
import type { PlaceholderHook } from "./placeholder-hook";
import { SECRET_SIG, SIG_KEY } from "../provider/values";
import { type Props, containsSecret, mapSecrets } from "./properties";

export interface ResourceState {
  urn: string;
  /** The registered type, e.g. `pulumi-nodejs:dynamic/gms:App`. */
  type: string;
  name: string;
  id: string;
  parent?: string;
  /** URNs this resource depends on (its parent excluded). */
  dependencies: string[];
  /** Checked inputs, `__provider` included. */
  inputs: Props;
  /** What the provider returned, `__provider` included; the host runs this text on read and delete. */
  outputs: Props;
  additionalSecretOutputs: string[];
  /** The old object of a create-before-delete replacement, to be deleted (Pulumi's `delete: true`). */
  pendingReplacement?: boolean;
  /** Why a create made the object but failed to finish it (Pulumi's `initErrors`): the next `up` updates it. */
  initErrors?: string[];
}

export interface Snapshot {
  resources: ResourceState[];
  /** Stack outputs of the last `up`. */
  outputs: Props;
}

interface SecretsHeader {
  type: "passphrase";
  kdf: "scrypt";
  salt: string;
  /** `"pulumi"` encrypted: tells a wrong passphrase from a corrupt file. */
  check: string;
}

interface StateDocument {
  version: 1;
  secrets?: SecretsHeader;
  outputs: Props;
  resources: ResourceState[];
}

const CHECK_PLAINTEXT = "pulumi";
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

const deriveKey = (passphrase: string, salt: Buffer) =>
  new Promise<Buffer>((resolve, reject) => scrypt(passphrase, salt, 32, SCRYPT, (error, key) => (error ? reject(error) : resolve(key))));

/** A create about to be sent: what the resource would be, and when. */
export interface PendingCreate {
  id: string;
  resource: Omit<ResourceState, "id" | "outputs">;
  /** When the create was sent (this machine's clock, ISO 8601). */
  at: string;
}

/** A journal line: what one checkpoint changed. */
type JournalEntry =
  | { secrets: SecretsHeader }
  | { put: ResourceState }
  | { drop: string }
  | { outputs: Props }
  | { creating: PendingCreate }
  | { settled: string };

/** A journal entry and where it is, for messages. */
interface JournalLine {
  entry: JournalEntry;
  /** `<file>.journal line <n>`. */
  where: string;
}

export interface StateFileOptions {
  /** What a create a killed run left unsettled becomes at load (default: nothing, it is forgotten). */
  lostCreate?: PlaceholderHook["lostCreate"];
  /** When a load finds such a create (default: the system clock). */
  clock?: Clock;
}

const keyOf = (resource: ResourceState): string => `${resource.urn}\n${resource.id}`;

export class StateFile {
  /** The header new secrets are sealed under: the file's, else the journal's, else the one made for the first secret. */
  private header: SecretsHeader | undefined;
  /** Other headers the file and journal hold (none, unless an earlier version wrote them): their keys are tried too. */
  private otherHeaders: SecretsHeader[] = [];
  /** Each header's key by salt, derived once whoever asks first: callers that ask meanwhile share the derivation. */
  private readonly keys = new Map<string, Promise<Buffer>>();
  /** The key of the file's first secret being made, with its header: concurrent callers wait for this one. */
  private newKey: Promise<Buffer> | undefined;
  /** The resource objects and outputs the file and journal hold now, by identity: only new objects are written. */
  private readonly recorded = new Map<string, ResourceState>();
  /** The same objects, to pass over unchanged ones without computing their keys. */
  private readonly recordedObjects = new Set<ResourceState>();
  private recordedOutputs: Props | undefined;
  /** Whether the journal has entries the file does not, and whether its secrets header is in it. */
  private journaled = false;
  private headerJournaled = false;
  private saving: Promise<void> = Promise.resolve();
  /** The journal's descriptor, open for appending while an operation checkpoints. */
  private journal: number | undefined;
  /**
   * What the first append does to the journal a killed run left: cut a torn last line off (its bytes from
   * `length` on), or end a last line whose newline the kill cut off, so that the next line starts a line.
   */
  private journalRepair: { length: number; newline: boolean } | undefined;
  /** Creates settled since the last checkpoint. */
  private readonly settledCreates: string[] = [];
  /** Bytes this object wrote to the journal and the file. */
  bytesWritten = 0;

  private get journalPath(): string {
    return `${this.path}.journal`;
  }

  constructor(
    readonly path: string,
    private readonly passphrase: string | undefined,
    private readonly options: StateFileOptions = {},
  ) {}

  /** Whether secrets can be written: a passphrase is known. */
  get canStoreSecrets(): boolean {
    return this.passphrase !== undefined;
  }

  /** The file, with the journal a killed run left replayed over it. */
  async load(): Promise<Snapshot> {
    const document = await this.readDocument();
    const journal = await this.readJournal();
    // Every header is known before any secret is opened, wherever the journal holds it.
    const headers: SecretsHeader[] = [];
    for (const header of [document?.secrets, ...(journal ?? []).map(({ entry }) => ("secrets" in entry ? entry.secrets : undefined))]) {
      if (header && !headers.some((known) => known.salt === header.salt)) headers.push(header);
    }
    [this.header, ...this.otherHeaders] = headers;
    // Replayed sealed, then only what is left is opened: an entry a later one replaced is never decrypted.
    const resources = new Map<string, { resource: ResourceState; where: string }>();
    for (const resource of document?.resources ?? []) resources.set(keyOf(resource), { resource, where: this.path });
    let outputs = { value: document?.outputs ?? {}, where: this.path };
    const pending = new Map<string, { create: PendingCreate; where: string }>();
    for (const { entry, where } of journal ?? []) {
      if ("put" in entry) resources.set(keyOf(entry.put), { resource: entry.put, where });
      else if ("drop" in entry) resources.delete(entry.drop);
      else if ("creating" in entry) pending.set(entry.creating.id, { create: entry.creating, where });
      else if ("settled" in entry) pending.delete(entry.settled);
      else if ("outputs" in entry) outputs = { value: entry.outputs, where };
    }
    const until = new Date((this.options.clock ?? systemClock).now()).toISOString();
    for (const { create, where } of pending.values()) {
      const placeholder = this.placeholder(create, until);
      if (placeholder) resources.set(keyOf(placeholder), { resource: placeholder, where });
    }
    const snapshot: Snapshot = { resources: [], outputs: (await this.opened(outputs.value, `${outputs.where} (stack outputs)`)) as Props };
    for (const { resource, where } of resources.values()) {
      snapshot.resources.push((await this.opened(resource, `${where} (${resource.urn})`)) as ResourceState);
    }
    if (journal !== undefined) {
      // The replayed state is not in the file yet: the end of this operation writes it.
      this.journaled = true;
      this.headerJournaled = this.header !== undefined;
    }
    for (const resource of snapshot.resources) this.record(keyOf(resource), resource);
    this.recordedOutputs = snapshot.outputs;
    return snapshot;
  }

  /** The file as written, secrets still sealed; undefined when there is none yet. */
  private async readDocument(): Promise<StateDocument | undefined> {
    const text = await readIfExists(this.path);
    if (text === undefined) return undefined;
    let document: StateDocument;
    try {
      document = JSON.parse(text) as StateDocument;
    } catch (error) {
      throw new EngineError("BAD_STATE", `${this.path} is not JSON`, { cause: error });
    }
    if (document?.version !== 1 || !Array.isArray(document.resources))
      throw new EngineError("BAD_STATE", `${this.path} is not a state file of this engine`);
    return document;
  }

  /**
   * The journal's entries, secrets still sealed; undefined when there is none. A last line that is not JSON
   * is one the kill cut short (its checkpoint never finished): it is left out, and cut off before the next append.
   */
  private async readJournal(): Promise<JournalLine[] | undefined> {
    const text = await readIfExists(this.journalPath);
    if (text === undefined) return undefined;
    const lines = text.split("\n");
    const entries: JournalLine[] = [];
    let length = 0;
    for (const [index, line] of lines.entries()) {
      const last = index === lines.length - 1;
      if (line.trim() !== "") {
        let entry: JournalEntry;
        try {
          entry = JSON.parse(line) as JournalEntry;
        } catch (error) {
          if (lines.slice(index + 1).every((rest) => rest.trim() === "")) {
            this.journalRepair = { length, newline: false };
            break;
          }
          throw new EngineError("BAD_STATE", `${this.journalPath} line ${index + 1} is not JSON`, { cause: error });
        }
        entries.push({ entry, where: `${this.journalPath} line ${index + 1}` });
        // A whole entry whose newline the kill cut off: the next append ends its line first.
        if (last) this.journalRepair = { length: length + Buffer.byteLength(line), newline: true };
      }
      length += Buffer.byteLength(line) + 1;
    }
    return entries;
  }

  /** What the hook records of a create a killed run left unsettled (its secrets still sealed): deleted by the next run. */
  private placeholder(create: PendingCreate, until: string): ResourceState | undefined {
    const { type, inputs } = create.resource;
    const recorded = this.options.lostCreate?.({ id: create.id, type, inputs, since: create.at, until });
    return recorded && { ...create.resource, id: recorded.id, outputs: recorded.outputs, pendingReplacement: true };
  }

  /**
   * Journals a create before it is sent, so that a run killed while it is in flight leaves a trace of it;
   * `settle` it once its result is recorded (or it failed without making anything). Sealed in its turn in
   * the write queue, as checkpoints are: the entry never lands before the header of the key it is sealed with.
   */
  creating(create: PendingCreate): Promise<void> {
    return this.inTurn(async () => this.appendEntries([{ creating: { ...create, resource: await this.sealed(create.resource) } }]));
  }

  /** A create's result is recorded: the next checkpoint says so. */
  settle(id: string): void {
    this.settledCreates.push(id);
  }

  /** A value with its secrets decrypted (as loaded from `where`, the file or a journal line). */
  private async opened(value: unknown, where: string): Promise<unknown> {
    if (!containsSecret(value)) return value;
    const { passphrase, header } = this;
    if (passphrase === undefined) throw passphraseRequired(this.path);
    if (header === undefined)
      throw new EngineError("BAD_STATE", `${where} holds a secret, but neither ${this.path} nor its journal records the salt of its key`);
    const keys = [await this.keyOf(header, passphrase)];
    // Only a state an earlier version wrote has several headers; a key that their check value refuses is left out.
    for (const other of this.otherHeaders) {
      const key = await this.keyOf(other, passphrase).catch(() => undefined);
      if (key) keys.push(key);
    }
    return mapSecrets(value, (secret: Props) => ({
      [SIG_KEY]: SECRET_SIG,
      value: JSON.parse(this.openSecret(keys, String(secret.ciphertext), where)) as unknown,
    }));
  }

  /** One secret's plaintext, or an error that says where the secret is and why it cannot be opened. */
  private openSecret(keys: Buffer[], ciphertext: string, where: string): string {
    for (const key of keys) {
      const plaintext = unseal(key, ciphertext, where);
      if (plaintext !== undefined) return plaintext;
    }
    const remedy = where.startsWith(this.journalPath)
      ? `Deleting that line of the journal (or the whole ${this.journalPath}) lets the state load without what it recorded, ` +
        "whose objects a `refresh` or the next `up` then has to find again"
      : "Restore the file from a copy";
    throw new EngineError(
      "BAD_STATE",
      `A secret in ${where} cannot be decrypted: the passphrase is right (it opens the check value of the state's secrets header), ` +
        "but the secret was sealed under a key whose salt the state does not record (a run of an earlier version, killed while it " +
        `stored a state's first secrets, could leave this). ${remedy}.`,
    );
  }

  /** A value with its secrets encrypted, for the file or the journal. */
  private async sealed<T>(value: T): Promise<T> {
    if (!containsSecret(value)) return value;
    const key = await this.secretsKey();
    return mapSecrets(value, (secret: Props) => ({
      [SIG_KEY]: SECRET_SIG,
      ciphertext: seal(key, JSON.stringify(secret.value ?? null)),
    })) as T;
  }

  /**
   * A checkpoint: appends to the journal what changed since the last one (resources are compared by
   * identity, so an unchanged resource costs nothing), so that a run killed after this point loses nothing.
   * Checkpoints are taken one at a time, in the order asked, so the journal's lines keep their order.
   */
  save(snapshot: Snapshot): Promise<void> {
    return this.inTurn(() => this.append(snapshot));
  }

  /** Runs journal writes one at a time, in the order asked (a failed one does not stop the next). */
  private inTurn(write: () => Promise<void>): Promise<void> {
    const written = this.saving.then(write);
    this.saving = written.catch(() => undefined);
    return written;
  }

  private async append(snapshot: Snapshot): Promise<void> {
    const entries: JournalEntry[] = [];
    // Only objects the journal has not seen cost anything: a checkpoint after one step compares one resource.
    const newKeys = new Set<string>();
    let unchanged = 0;
    for (const resource of snapshot.resources) {
      if (this.recordedObjects.has(resource)) {
        unchanged++;
        continue;
      }
      const key = keyOf(resource);
      newKeys.add(key);
      const recorded = this.recorded.get(key);
      this.record(key, resource);
      // A new object with the same content (an unchanged resource registered again) changes nothing.
      if (recorded && sameJson(inReadingOrder(recorded), inReadingOrder(resource))) continue;
      entries.push({ put: await this.sealed(inReadingOrder(resource)) });
    }
    // Unless the snapshot repeats a key, only more recorded than present can mean that some were dropped.
    const distinct = unchanged + newKeys.size === snapshot.resources.length;
    if (!distinct || this.recorded.size > snapshot.resources.length) {
      const present = new Set(snapshot.resources);
      for (const [key, resource] of this.recorded) {
        if (present.has(resource) || newKeys.has(key)) continue;
        entries.push({ drop: key });
        this.recorded.delete(key);
        this.recordedObjects.delete(resource);
      }
    }
    if (snapshot.outputs !== this.recordedOutputs) {
      if (!sameJson(snapshot.outputs, this.recordedOutputs)) entries.push({ outputs: await this.sealed(snapshot.outputs) });
      this.recordedOutputs = snapshot.outputs;
    }
    // Settled after what records their results, in the same append.
    for (const id of this.settledCreates.splice(0)) entries.push({ settled: id });
    await this.appendEntries(entries);
  }

  private record(key: string, resource: ResourceState): void {
    const replaced = this.recorded.get(key);
    if (replaced) this.recordedObjects.delete(replaced);
    this.recorded.set(key, resource);
    this.recordedObjects.add(resource);
  }

  private async appendEntries(entries: JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // The header goes with the first append after it exists: before any entry sealed with its key, in the same write.
    if (this.header && !this.headerJournaled) {
      entries.unshift({ secrets: this.header });
      this.headerJournaled = true;
    }
    let text = `${entries.map((entry) => JSON.stringify(entry)).join("\n")}\n`;
    if (this.journal === undefined) {
      await mkdir(dirname(this.path), { recursive: true });
      this.journal = openSync(this.journalPath, "a");
      // The lock this operation holds keeps every other writer away from the journal while it is repaired.
      const repair = this.journalRepair;
      this.journalRepair = undefined;
      if (repair?.newline) text = `\n${text}`;
      else if (repair) ftruncateSync(this.journal, repair.length);
    }
    // One synchronous append: a few microseconds, where a write through the thread pool costs several times that.
    writeSync(this.journal, text);
    this.bytesWritten += Buffer.byteLength(text);
    this.journaled = true;
  }

  /** Closes the journal (kept open through an operation, so each checkpoint is one write). */
  private closeJournal(): void {
    const journal = this.journal;
    this.journal = undefined;
    if (journal !== undefined) closeSync(journal);
  }

  /** The end of an operation: the file written once from the last checkpoint, the journal removed. Nothing when nothing changed. */
  async finish(snapshot: Snapshot): Promise<void> {
    try {
      await this.save(snapshot);
    } finally {
      this.closeJournal();
    }
    if (!this.journaled) return;
    await this.write(snapshot);
    await rm(this.journalPath, { force: true });
    this.journaled = false;
    this.headerJournaled = false;
    this.journalRepair = undefined;
  }

  /** Writes atomically (temporary file, then rename), so a crash never leaves half a state. */
  private async write(snapshot: Snapshot): Promise<void> {
    const outputs = await this.sealed(snapshot.outputs);
    const resources = await this.sealed(snapshot.resources.map(inReadingOrder));
    // Sealing made the header if this is the file's first secret; a file that ever held one keeps it.
    const document: StateDocument = {
      version: 1,
      ...(this.header ? { secrets: this.header } : {}),
      outputs,
      resources,
    };
    await mkdir(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    const text = `${JSON.stringify(document, null, 2)}\n`;
    await writeFile(temporary, text);
    this.bytesWritten += Buffer.byteLength(text);
    await rename(temporary, this.path);
  }

  /**
   * The AES key new secrets are sealed with: the header's, or, for the file's first secret, a new salt's.
   * One derivation per file: whoever asks while it runs waits for it (each making a salt of its own would
   * seal entries under keys no header records).
   */
  private secretsKey(): Promise<Buffer> {
    const { passphrase, header } = this;
    if (passphrase === undefined) return Promise.reject(passphraseRequired(this.path));
    if (header) return this.keyOf(header, passphrase);
    this.newKey ??= this.makeHeader(passphrase);
    return this.newKey;
  }

  /** A new salt and its key; the header is set once the key exists, before any caller can seal with it. */
  private async makeHeader(passphrase: string): Promise<Buffer> {
    const salt = randomBytes(16);
    const key = await deriveKey(passphrase, salt);
    const header: SecretsHeader = { type: "passphrase", kdf: "scrypt", salt: salt.toString("base64"), check: seal(key, CHECK_PLAINTEXT) };
    this.keys.set(header.salt, Promise.resolve(key));
    this.header = header;
    return key;
  }

  /** A recorded header's key, checked against its check value (a wrong passphrase fails here). */
  private keyOf(header: SecretsHeader, passphrase: string): Promise<Buffer> {
    let key = this.keys.get(header.salt);
    if (!key) {
      key = deriveKey(passphrase, Buffer.from(header.salt, "base64")).then((derived) => {
        if (unseal(derived, header.check, this.path) !== CHECK_PLAINTEXT)
          throw new EngineError("BAD_PASSPHRASE", `The passphrase does not decrypt the secrets of ${this.path}`);
        return derived;
      });
      this.keys.set(header.salt, key);
    }
    return key;
  }
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

const passphraseRequired = (path: string) =>
  new EngineError(
    "PASSPHRASE_REQUIRED",
    `The state ${path} holds secrets: pass secretsPassphrase or set PULUMI_CONFIG_PASSPHRASE to encrypt and decrypt them`,
  );

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The same resource with its keys in the order a reader wants them. */
const inReadingOrder = ({
  urn,
  type,
  name,
  id,
  parent,
  dependencies,
  additionalSecretOutputs,
  pendingReplacement,
  initErrors,
  inputs,
  outputs,
}: ResourceState): ResourceState => ({
  urn,
  type,
  name,
  id,
  ...(parent === undefined ? {} : { parent }),
  dependencies,
  additionalSecretOutputs,
  ...(pendingReplacement ? { pendingReplacement } : {}),
  ...(initErrors ? { initErrors } : {}),
  inputs,
  outputs,
});

/** `v1:<nonce>:<ciphertext and tag>`, base64, as Pulumi's symmetric crypter writes it. */
function seal(key: Buffer, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `v1:${nonce.toString("base64")}:${data.toString("base64")}`;
}

/** The plaintext, or undefined when `key` is not the one it was sealed with (GCM's tag does not authenticate). */
function unseal(key: Buffer, ciphertext: string, where: string): string | undefined {
  const [version, nonce, data] = ciphertext.split(":");
  if (version !== "v1" || !nonce || !data) throw new EngineError("BAD_STATE", `A secret in ${where} is not in the v1 format`);
  const bytes = Buffer.from(data, "base64");
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
