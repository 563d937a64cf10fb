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
 * its object, so the load turns it into what this package's provider records for a create whose answer
 * was lost: a placeholder (`unresolved-<id>`, with the window the object would have been created in)
 * awaiting deletion, which the next `up` or `destroy` deletes, deleting the object if the provider finds it.
 * A torn last line (the kill cut an append short) is ignored.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { EngineError } from "./errors";
import { type Props, SECRET_SIG, SIG, containsSecret, mapSecrets } from "./properties";

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

/** Dynamic resources of this package, whose provider resolves a placeholder for a lost create. */
const PLACEHOLDER_TYPES = "pulumi-nodejs:dynamic/gms:";
/** The provider's marker of such a placeholder (`UNRESOLVED_CREATE` in src/provider/provider.ts). */
const UNRESOLVED_CREATE = "__unresolvedCreate";
/** How much earlier than this machine's clock says the service may have stamped the object. */
const CLOCK_MARGIN_MS = 2000;

const keyOf = (resource: ResourceState): string => `${resource.urn}\n${resource.id}`;

export class StateFile {
  private header: SecretsHeader | undefined;
  private key: Buffer | undefined;
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
  ) {}

  /** Whether secrets can be written: a passphrase is known. */
  get canStoreSecrets(): boolean {
    return this.passphrase !== undefined;
  }

  /** The file, with the journal a killed run left replayed over it. */
  async load(): Promise<Snapshot> {
    const snapshot = await this.loadFile();
    const journal = await readIfExists(this.journalPath);
    if (journal !== undefined) {
      const resources = new Map(snapshot.resources.map((resource) => [keyOf(resource), resource]));
      const pending = new Map<string, PendingCreate>();
      let outputs = snapshot.outputs;
      const lines = journal.split("\n").filter((line) => line.trim() !== "");
      for (const [index, line] of lines.entries()) {
        let entry: JournalEntry;
        try {
          entry = JSON.parse(line) as JournalEntry;
        } catch (error) {
          if (index === lines.length - 1) break;
          throw new EngineError("BAD_STATE", `${this.journalPath} line ${index + 1} is not JSON`, { cause: error });
        }
        if ("secrets" in entry) this.header = entry.secrets;
        else if ("put" in entry) resources.set(keyOf(entry.put), (await this.opened(entry.put)) as ResourceState);
        else if ("drop" in entry) resources.delete(entry.drop);
        else if ("creating" in entry) pending.set(entry.creating.id, entry.creating);
        else if ("settled" in entry) pending.delete(entry.settled);
        else outputs = (await this.opened(entry.outputs)) as Props;
      }
      const until = new Date().toISOString();
      for (const create of pending.values()) {
        if (!create.resource.type.startsWith(PLACEHOLDER_TYPES)) continue;
        const placeholder = await this.placeholder(create, until);
        resources.set(keyOf(placeholder), placeholder);
      }
      snapshot.resources = [...resources.values()];
      snapshot.outputs = outputs;
      // The replayed state is not in the file yet: the end of this operation writes it.
      this.journaled = true;
      this.headerJournaled = this.header !== undefined;
    }
    for (const resource of snapshot.resources) this.record(keyOf(resource), resource);
    this.recordedOutputs = snapshot.outputs;
    return snapshot;
  }

  private async loadFile(): Promise<Snapshot> {
    const text = await readIfExists(this.path);
    if (text === undefined) return { resources: [], outputs: {} };
    const document = JSON.parse(text) as StateDocument;
    if (document.version !== 1 || !Array.isArray(document.resources))
      throw new EngineError("BAD_STATE", `${this.path} is not a state file of this engine`);
    this.header = document.secrets;
    return {
      resources: (await this.opened(document.resources)) as ResourceState[],
      outputs: (await this.opened(document.outputs ?? {})) as Props,
    };
  }

  /** The placeholder of a create a killed run left unsettled: deleted by the next run, with what it made. */
  private async placeholder(create: PendingCreate, until: string): Promise<ResourceState> {
    const inputs = (await this.opened(create.resource.inputs)) as Props;
    const since = new Date(Date.parse(create.at) - CLOCK_MARGIN_MS).toISOString();
    return {
      ...create.resource,
      id: `unresolved-${create.id}`,
      inputs,
      outputs: { ...inputs, [UNRESOLVED_CREATE]: { since, until } },
      pendingReplacement: true,
    };
  }

  /**
   * Journals a create before it is sent, so that a run killed while it is in flight leaves a trace of it;
   * `settle` it once its result is recorded (or it failed without making anything).
   */
  async creating(create: PendingCreate): Promise<void> {
    const entry: JournalEntry = { creating: { ...create, resource: await this.sealed(create.resource) } };
    await this.inTurn(() => this.appendEntries([entry]));
  }

  /** A create's result is recorded: the next checkpoint says so. */
  settle(id: string): void {
    this.settledCreates.push(id);
  }

  /** A value with its secrets decrypted (as loaded from the journal). */
  private async opened(value: unknown): Promise<unknown> {
    if (!containsSecret(value)) return value;
    const key = await this.secretsKey();
    return mapSecrets(value, (secret: Props) => ({
      [SIG]: SECRET_SIG,
      value: JSON.parse(unseal(key, String(secret.ciphertext))) as unknown,
    }));
  }

  /** A value with its secrets encrypted, for the file or the journal. */
  private async sealed<T>(value: T): Promise<T> {
    if (!containsSecret(value)) return value;
    const key = await this.secretsKey();
    return mapSecrets(value, (secret: Props) => ({ [SIG]: SECRET_SIG, ciphertext: seal(key, JSON.stringify(secret.value ?? null)) })) as T;
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
    if (this.header && !this.headerJournaled) {
      entries.unshift({ secrets: this.header });
      this.headerJournaled = true;
    }
    if (this.journal === undefined) {
      await mkdir(dirname(this.path), { recursive: true });
      this.journal = openSync(this.journalPath, "a");
    }
    const text = `${entries.map((entry) => JSON.stringify(entry)).join("\n")}\n`;
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
  }

  /** Writes atomically (temporary file, then rename), so a crash never leaves half a state. */
  private async write(snapshot: Snapshot): Promise<void> {
    const outputs = await this.sealed(snapshot.outputs);
    const resources = await this.sealed(snapshot.resources.map(inReadingOrder));
    // Sealing made the header if this is the file's first secret; a file that ever held one keeps it.
    const document: StateDocument = { version: 1, ...(this.header ? { secrets: this.header } : {}), outputs, resources };
    await mkdir(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    const text = `${JSON.stringify(document, null, 2)}\n`;
    await writeFile(temporary, text);
    this.bytesWritten += Buffer.byteLength(text);
    await rename(temporary, this.path);
  }

  /** The AES key: derived once per file, from the salt in the file or a new one. */
  private async secretsKey(): Promise<Buffer> {
    if (this.key) return this.key;
    if (this.passphrase === undefined) {
      throw new EngineError(
        "PASSPHRASE_REQUIRED",
        `The state ${this.path} holds secrets: pass secretsPassphrase or set PULUMI_CONFIG_PASSPHRASE to encrypt and decrypt them`,
      );
    }
    if (!this.header) {
      const salt = randomBytes(16);
      const key = await deriveKey(this.passphrase, salt);
      this.header = { type: "passphrase", kdf: "scrypt", salt: salt.toString("base64"), check: seal(key, CHECK_PLAINTEXT) };
      return (this.key = key);
    }
    const key = await deriveKey(this.passphrase, Buffer.from(this.header.salt, "base64"));
    let check: string | undefined;
    try {
      check = unseal(key, this.header.check);
    } catch {
      check = undefined;
    }
    if (check !== CHECK_PLAINTEXT) throw new EngineError("BAD_PASSPHRASE", `The passphrase does not decrypt the secrets of ${this.path}`);
    return (this.key = key);
  }
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

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

function unseal(key: Buffer, ciphertext: string): string {
  const [version, nonce, data] = ciphertext.split(":");
  if (version !== "v1" || !nonce || !data) throw new EngineError("BAD_STATE", "A secret in the state is not in the v1 format");
  const bytes = Buffer.from(data, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8");
}
