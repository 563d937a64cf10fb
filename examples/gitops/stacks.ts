/**
 * The stack list, `gms-stacks.yaml`: the stacks a repository holds, each with its program's folder, its Pulumi stack
 * name, its settings file and the stacks whose outputs it reads. pipeline.ts reads it to know which stacks a change
 * touches (and so which to plan on a pull request), in which order the merge applies them (levels), and which stacks
 * the drift job covers.
 *
 *   shared:                 optional: folders or files whose change touches every stack (common code)
 *     - lib/
 *   stacks:
 *     shared:               the entry's name (unique; [a-z0-9-]+), used in dependsOn and in reports
 *       dir: shared         the program's folder (holds Pulumi.yaml)
 *       stack: prod         the Pulumi stack name (required)
 *       config: shared/Pulumi.prod.yaml   optional, default <dir>/Pulumi.<stack>.yaml: the stack's settings file
 *     support:
 *       dir: apps/support
 *       stack: prod
 *       dependsOn: [shared] optional: entries whose outputs this one reads
 *
 * Paths are relative to the file. Unknown keys, a cycle, a dependsOn naming no entry, or two entries with the same
 * dir and stack are errors that name the key and the fix (StackListError). Pure functions but `readStackList` (which
 * also checks that each folder holds a Pulumi.yaml) and `changedFilesSince` (git).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { isMap, isScalar, isSeq, parseDocument, type YAMLMap } from "yaml";

export interface StackEntry {
  /** The entry's name in the file. */
  name: string;
  /** The program's folder, relative to the file (posix, no trailing slash). */
  dir: string;
  /** The Pulumi stack name. */
  stack: string;
  /** The stack's settings file, relative to the file: `config`, else `<dir>/Pulumi.<stack>.yaml`. */
  config: string;
  /** Whether `config` was given (a settings file elsewhere than the program's folder). */
  configGiven: boolean;
  /** The entries whose outputs this one reads, as written. */
  dependsOn: string[];
}

export interface StackList {
  /** The file, as read (absolute). */
  file: string;
  /** The folder the paths are relative to: the file's. */
  root: string;
  /** Paths whose change touches every stack (posix, relative to `root`). */
  shared: string[];
  /** The entries, in the file's order. */
  entries: StackEntry[];
}

/** A stack list that cannot be used: its message names the file, the key and the fix. */
export class StackListError extends Error {
  override readonly name = "StackListError";
}

const ENTRY_NAME = /^[a-z0-9-]+$/;
const TOP_KEYS = ["shared", "stacks"] as const;
const ENTRY_KEYS = ["dir", "stack", "config", "dependsOn"] as const;
/** What a Pulumi stack name may hold: `dev`, `org/dev`, `org/project/dev`. */
const STACK_NAME = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+){0,2}$/;

/** A path of the file, as a folder relative to its root: posix, normalized, without `./` or a trailing slash. */
function relativePath(value: string, key: string, file: string): string {
  if (value.trim() === "") throw new StackListError(`${file}: ${key} is empty: give a path relative to ${file}'s folder`);
  if (isAbsolute(value) || /^[A-Za-z]:[\\/]/.test(value))
    throw new StackListError(`${file}: ${key} is an absolute path (${value}): give it relative to ${file}'s folder`);
  const normalized = posix.normalize(value.replaceAll("\\", "/")).replace(/\/+$/, "");
  return normalized === "" ? "." : normalized;
}

function stringAt(map: YAMLMap, key: string, where: string, file: string, fix: string): string | undefined {
  const node = map.get(key, true);
  if (node === undefined) return undefined;
  if (!isScalar(node) || typeof node.value !== "string" || node.value === "")
    throw new StackListError(`${file}: ${where}.${key} must be a non-empty string: ${fix}`);
  return node.value;
}

function refuseUnknownKeys(map: YAMLMap, known: readonly string[], where: string, file: string): void {
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!known.includes(key)) {
      const near = known.find((each) => each.toLowerCase() === key.toLowerCase());
      throw new StackListError(
        `${file}: ${where ? `${where}.` : ""}${key} is not a key of ${where || "the stack list"}: ` +
          (near ? `did you mean ${near}?` : `remove it (the keys are ${known.join(", ")})`),
      );
    }
  }
}

/** The stack list in `text` (the contents of `file`), checked; throws a StackListError naming the key and the fix. */
export function parseStackList(text: string, file: string): StackList {
  const document = parseDocument(text, { uniqueKeys: true });
  const [error] = document.errors;
  if (error) {
    const duplicate = /unique/i.test(error.message) ? ": each entry's name (and each key) may appear once; rename or merge the two" : "";
    throw new StackListError(`${file}: not valid YAML: ${error.message.split("\n")[0]!.replace(/:$/, "")}${duplicate}`);
  }
  const top = document.contents;
  if (!isMap(top)) throw new StackListError(`${file}: must be a mapping with a \`stacks:\` key (and optionally \`shared:\`)`);
  refuseUnknownKeys(top, TOP_KEYS, "", file);

  const sharedNode = top.get("shared", true);
  const shared: string[] = [];
  if (sharedNode !== undefined && !(isScalar(sharedNode) && sharedNode.value === null)) {
    if (!isSeq(sharedNode)) throw new StackListError(`${file}: shared must be a list of folders or files, e.g. \`shared: [lib/]\``);
    sharedNode.items.forEach((item, index) => {
      if (!isScalar(item) || typeof item.value !== "string")
        throw new StackListError(`${file}: shared[${index}] must be a path (a folder or a file), relative to ${file}'s folder`);
      shared.push(relativePath(item.value, `shared[${index}]`, file));
    });
  }

  const stacksNode = top.get("stacks", true);
  if (!isMap(stacksNode) || stacksNode.items.length === 0)
    throw new StackListError(
      `${file}: stacks is missing or empty: add one entry per stack, e.g. \`stacks: { shared: { dir: shared, stack: prod } }\``,
    );
  const entries: StackEntry[] = [];
  for (const pair of stacksNode.items) {
    const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const where = `stacks.${name}`;
    if (!ENTRY_NAME.test(name))
      throw new StackListError(
        `${file}: ${where}: an entry's name may hold only a-z, 0-9 and -: rename it (e.g. ${name.toLowerCase().replace(/[^a-z0-9-]+/g, "-")})`,
      );
    if (!isMap(pair.value)) throw new StackListError(`${file}: ${where} must be a mapping with dir and stack`);
    refuseUnknownKeys(pair.value, ENTRY_KEYS, where, file);
    const dirText = stringAt(pair.value, "dir", where, file, "the program's folder (holding Pulumi.yaml), relative to the file");
    if (dirText === undefined)
      throw new StackListError(`${file}: ${where}.dir is missing: give the program's folder (holding Pulumi.yaml)`);
    const stack = stringAt(pair.value, "stack", where, file, "the Pulumi stack name, e.g. prod");
    if (stack === undefined)
      throw new StackListError(`${file}: ${where}.stack is missing: give the Pulumi stack name, e.g. \`stack: prod\``);
    if (!STACK_NAME.test(stack))
      throw new StackListError(
        `${file}: ${where}.stack (${stack}) is not a Pulumi stack name: use letters, digits, -, _ and . (org/stack on Pulumi Cloud)`,
      );
    const dir = relativePath(dirText, `${where}.dir`, file);
    const configText = stringAt(pair.value, "config", where, file, "the stack's settings file, relative to the file");
    const dependsOnNode = pair.value.get("dependsOn", true);
    const dependsOn: string[] = [];
    if (dependsOnNode !== undefined) {
      if (!isSeq(dependsOnNode)) throw new StackListError(`${file}: ${where}.dependsOn must be a list of entry names, e.g. [shared]`);
      dependsOnNode.items.forEach((item, index) => {
        if (!isScalar(item) || typeof item.value !== "string")
          throw new StackListError(`${file}: ${where}.dependsOn[${index}] must be the name of an entry of stacks`);
        dependsOn.push(item.value);
      });
    }
    const lastPart = stack.slice(stack.lastIndexOf("/") + 1);
    entries.push({
      name,
      dir,
      stack,
      config: configText === undefined ? posix.join(dir, `Pulumi.${lastPart}.yaml`) : relativePath(configText, `${where}.config`, file),
      configGiven: configText !== undefined,
      dependsOn,
    });
  }

  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const place = `${entry.dir}\0${entry.stack}`;
    const other = seen.get(place);
    if (other !== undefined)
      throw new StackListError(
        `${file}: stacks.${entry.name} and stacks.${other} are both stack ${entry.stack} of ${entry.dir}: one stack must have one entry; ` +
          "remove one, or give it another stack",
      );
    seen.set(place, entry.name);
    entry.dependsOn.forEach((dependency, index) => {
      if (!byName.has(dependency))
        throw new StackListError(
          `${file}: stacks.${entry.name}.dependsOn[${index}] names ${dependency}, which is no entry of stacks: ` +
            `use one of ${entries.map((each) => each.name).join(", ")}, or add the entry`,
        );
    });
  }
  const cycle = findCycle(entries, byName);
  if (cycle)
    throw new StackListError(
      `${file}: stacks depend on each other in a cycle (${cycle.join(" → ")}): a stack can read only stacks applied before it; ` +
        `remove one of these dependsOn`,
    );
  return { file, root: dirname(file), shared, entries };
}

/** A cycle of dependsOn, as the names along it (the first repeated at the end), or undefined. */
function findCycle(entries: readonly StackEntry[], byName: Map<string, StackEntry>): string[] | undefined {
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (name: string): string[] | undefined => {
    if (state.get(name) === "done") return undefined;
    if (state.get(name) === "visiting") return [...path.slice(path.indexOf(name)), name];
    state.set(name, "visiting");
    path.push(name);
    for (const dependency of byName.get(name)!.dependsOn) {
      const found = visit(dependency);
      if (found) return found;
    }
    path.pop();
    state.set(name, "done");
    return undefined;
  };
  for (const entry of entries) {
    const found = visit(entry.name);
    if (found) return found;
  }
  return undefined;
}

/** The stack list in `file`, each entry's folder checked to hold a Pulumi program. */
export function readStackList(file: string): StackList {
  const absolute = resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, "utf8");
  } catch (error) {
    throw new StackListError(
      `${file}: cannot read the stack list (${(error as NodeJS.ErrnoException).code ?? String(error)}): --stacks names gms-stacks.yaml`,
    );
  }
  const list = parseStackList(text, absolute);
  for (const entry of list.entries)
    if (!existsSync(join(list.root, entry.dir, "Pulumi.yaml")))
      throw new StackListError(
        `${file}: stacks.${entry.name}.dir (${entry.dir}) holds no Pulumi.yaml: name the folder of the stack's program`,
      );
  return list;
}

/** The entry named `name`; a name the list does not hold is an error naming the entries it does. */
export function entryOf(list: StackList, name: string): StackEntry {
  const entry = list.entries.find((each) => each.name === name);
  if (!entry) throw new StackListError(`${list.file} has no entry ${name}: use one of ${list.entries.map((each) => each.name).join(", ")}`);
  return entry;
}

/** `names` and every entry that depends on one of them, directly or not, in the file's order. */
export function withDependents(list: StackList, names: Iterable<string>): string[] {
  const chosen = new Set(names);
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of list.entries)
      if (!chosen.has(entry.name) && entry.dependsOn.some((dependency) => chosen.has(dependency))) {
        chosen.add(entry.name);
        grew = true;
      }
  }
  return list.entries.filter((entry) => chosen.has(entry.name)).map((entry) => entry.name);
}

/**
 * The entries of `names` by level, for the merge's matrix jobs: level 0 holds those that depend on none of `names`,
 * level n those whose deepest dependency among `names` is at level n - 1. Each level's stacks run in parallel once the
 * level before has been applied. Within a level, the file's order.
 */
export function levelsOf(list: StackList, names: Iterable<string>): string[][] {
  const chosen = new Set(names);
  const level = new Map<string, number>();
  const levelOf = (entry: StackEntry): number => {
    const known = level.get(entry.name);
    if (known !== undefined) return known;
    const deps = entry.dependsOn.filter((dependency) => chosen.has(dependency)).map((dependency) => levelOf(entryOf(list, dependency)));
    const found = deps.length === 0 ? 0 : Math.max(...deps) + 1;
    level.set(entry.name, found);
    return found;
  };
  const levels: string[][] = [];
  for (const entry of list.entries.filter((each) => chosen.has(each.name))) (levels[levelOf(entry)] ??= []).push(entry.name);
  return levels;
}

/** Why each entry is touched by a change: its name, with the first reason found. */
export type Touched = Map<string, string>;

const under = (path: string, folder: string) => folder === "." || path === folder || path.startsWith(`${folder}/`);

/** Whether two entries would run the same way: the same folder, stack, settings file and dependencies. */
const sameEntry = (a: StackEntry, b: StackEntry) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The entries a change of `changed` (paths relative to the list's folder, posix) touches, with why: a file in an
 * entry's folder or its settings file, a file under a `shared` path (every entry), the list itself where an entry is
 * new or differs from `before` (the list as it was before the change; every entry when there is none or its `shared`
 * paths differ), and then every entry that depends on a touched one.
 */
export function touchedEntries(list: StackList, changed: readonly string[], before?: StackList): Touched {
  const touched: Touched = new Map();
  const touch = (name: string, why: string) => {
    if (!touched.has(name)) touched.set(name, why);
  };
  const listFile = relative(list.root, list.file).split(sep).join("/");
  for (const path of changed) {
    const shared = list.shared.find((folder) => under(path, folder));
    if (shared !== undefined)
      for (const entry of list.entries) touch(entry.name, `\`${path}\` is shared by every stack (gms-stacks.yaml \`shared: ${shared}\`)`);
    if (path === listFile) {
      const changedShared = !before || JSON.stringify(before.shared) !== JSON.stringify(list.shared);
      for (const entry of list.entries) {
        const was = before?.entries.find((each) => each.name === entry.name);
        if (changedShared || !was || !sameEntry(was, entry))
          touch(entry.name, was ? `its entry in ${listFile} changed` : `its entry in ${listFile} is new`);
      }
    }
    for (const entry of list.entries) {
      if (path === entry.config) touch(entry.name, `\`${path}\` is its settings file`);
      else if (under(path, entry.dir)) touch(entry.name, `\`${path}\` is in its folder (${entry.dir})`);
    }
  }
  for (const name of withDependents(list, touched.keys())) {
    const entry = entryOf(list, name);
    const through = entry.dependsOn.find((dependency) => touched.has(dependency));
    if (through !== undefined) touch(name, `it depends on ${through}, which this change touches`);
  }
  return new Map(list.entries.filter((entry) => touched.has(entry.name)).map((entry) => [entry.name, touched.get(entry.name)!]));
}

/** A commit that names no commit: what GitHub sends as the `before` of a branch's first push. */
export const isNullCommit = (ref: string) => /^0+$/.test(ref);

/**
 * The files changed since `ref` (`git diff --name-only --no-renames <ref>...HEAD`: a renamed file counts at both of its
 * paths), relative to the list's folder; and the list as it was at `ref`, when the file existed there and parsed.
 */
export function changedFilesSince(list: StackList, ref: string): { changed: string[]; before?: StackList } {
  const git = (args: string[]) => spawnSync("git", args, { cwd: list.root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const top = git(["rev-parse", "--show-toplevel"]);
  if (top.status !== 0) throw new StackListError(`${list.root} is not in a git checkout (${top.stderr.trim()}): --changed-since needs one`);
  const diff = git(["diff", "--name-only", "--no-renames", `${ref}...HEAD`]);
  if (diff.status !== 0)
    throw new StackListError(
      `cannot list the files changed since ${ref} (${diff.stderr.trim().split("\n")[0]}): fetch the history it needs ` +
        "(actions/checkout with fetch-depth: 0), or pass --all",
    );
  const root = top.stdout.trim();
  const changed = diff.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((path) => relative(list.root, join(root, path)).split(sep).join("/"));
  const listPath = relative(root, list.file).split(sep).join("/");
  const old = git(["show", `${ref}:${listPath}`]);
  if (old.status !== 0) return { changed };
  try {
    return { changed, before: parseStackList(old.stdout, list.file) };
  } catch {
    return { changed };
  }
}
