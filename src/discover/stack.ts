/**
 * What a stack already manages, read from its `pulumi stack export`: the GUIDs of its gms objects (native
 * `gms:index:<Kind>` and dynamic `pulumi-nodejs:dynamic/gms:<Kind>` resources alike: each one's id is the object's
 * GUID) and the names its program already uses, which an import into it must not take again.
 */
import { execFile } from "node:child_process";
import { parseStackExport, urnParts } from "../migrate/stack-export";
import { KIND_NAMES } from "../resources";
import { kindOfDynamicToken, nameOfNativeToken } from "../provider/tokens";

export interface ManagedObjects {
  /** The stack's name, as given. */
  stack: string;
  /** The URN of the resource that manages each object, by the object's GUID. */
  urns: Map<string, string>;
  /** The names the stack's resources use, each with the GUID of the gms object it stands for (undefined for anything else). */
  names: Map<string, string | undefined>;
}

/** Whether a resource type is one of the gms kinds, native or dynamic (not a function, not the Workspace component). */
const isGmsKind = (type: string): boolean => {
  const name = nameOfNativeToken(type) ?? kindOfDynamicToken(type);
  return name !== undefined && (KIND_NAMES as readonly string[]).includes(name);
};

/** Reads an export's text; a text that is no stack export throws a `MigrationError` saying what it is instead. */
export function managedObjects(stack: string, exportText: string): ManagedObjects {
  const deployment = parseStackExport(exportText, `the export of stack ${stack}`).deployment;
  const urns = new Map<string, string>();
  const names = new Map<string, string | undefined>();
  for (const resource of deployment.resources ?? []) {
    // The stack itself and the providers (of any package) are no names of the program.
    if (resource.type === "pulumi:pulumi:Stack" || resource.type.startsWith("pulumi:providers:")) continue;
    const gms = isGmsKind(resource.type) && resource.id ? resource.id : undefined;
    if (gms) urns.set(gms, resource.urn);
    names.set(urnParts(resource.urn).name, gms);
  }
  return { stack, urns, names };
}

export class StackExportError extends Error {
  override readonly name = "StackExportError";
}

/**
 * `pulumi stack export --stack <stack>` run in `cwd` (the project's folder) with `env`: its output, or a
 * `StackExportError` with what the CLI said.
 */
export function exportStack(pulumi: string, stack: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    // Asynchronous: a service answering from this process (the emulator, in a test) keeps answering meanwhile.
    execFile(
      pulumi,
      ["stack", "export", "--stack", stack, "--non-interactive"],
      { cwd, env, encoding: "utf8", maxBuffer: 512 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const code = (error as NodeJS.ErrnoException).code;
        const said = stderr.trim() || error.message;
        reject(
          new StackExportError(
            code === "ENOENT"
              ? `cannot run ${pulumi}: not found (put the Pulumi CLI on PATH, or give its path with --pulumi)`
              : `\`${pulumi} stack export --stack ${stack}\` failed: ${said}`,
          ),
        );
      },
    );
  });
}
