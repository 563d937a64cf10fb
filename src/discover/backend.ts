/**
 * Where the stacks of an adopted project keep their state: the state backend the user is logged in to (`pulumi whoami
 * --json`, which answers the backend of `PULUMI_BACKEND_URL` or of the last `pulumi login`), so that the commands
 * discover prints name it; or, when there is none (no login, no Pulumi CLI), the hint that starts a new project's
 * (Pulumi Cloud with `pulumi login`, or a folder with `PULUMI_BACKEND_URL` and a passphrase). The hint says no more
 * than that there is no login: what the CLI printed (its error, or the lack of a CLI) is not the user's next step.
 * A backend other than Pulumi Cloud seals a stack's secrets with a passphrase by default, which `pulumi stack init`
 * then needs; Pulumi Cloud seals them itself.
 */
import { execFile } from "node:child_process";

export interface Backend {
  /** The backend's URL, without any user or password it holds; undefined when there is no current login. */
  url?: string;
  /** Where the URL comes from: the environment, or the CLI's own login. */
  from?: "PULUMI_BACKEND_URL" | "login";
  /** Whether a user or password was taken out of the URL. */
  credentialsLeftOut?: boolean;
}

/** How long `pulumi whoami` may take (Pulumi Cloud answers it over the network). */
const WHOAMI_TIMEOUT_MS = 30_000;

/**
 * The backend `pulumi` (the CLI at that path) is logged in to, run in `cwd` with `env`; never fails: no CLI, a
 * `pulumi whoami` that fails or answers no backend, all mean no current login.
 */
export function currentBackend(pulumi: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Backend> {
  return new Promise((resolve) => {
    execFile(
      pulumi,
      ["whoami", "--json", "--non-interactive"],
      { cwd, env, encoding: "utf8", timeout: WHOAMI_TIMEOUT_MS },
      (error, stdout) => {
        if (error) return resolve({});
        try {
          const { url } = JSON.parse(stdout) as { url?: unknown };
          if (typeof url !== "string" || url === "") return resolve({});
          resolve({ ...withoutCredentials(url), from: env.PULUMI_BACKEND_URL ? "PULUMI_BACKEND_URL" : "login" });
        } catch {
          resolve({});
        }
      },
    );
  });
}

/** The URL without a user or password (a Postgres backend's URL may hold them: never printed). */
function withoutCredentials(text: string): Pick<Backend, "url" | "credentialsLeftOut"> {
  try {
    const url = new URL(text);
    if (url.username === "" && url.password === "") return { url: text };
    url.username = "";
    url.password = "";
    return { url: url.toString(), credentialsLeftOut: true };
  } catch {
    return { url: text };
  }
}

/** A word for a POSIX shell: as it is when it holds nothing the shell reads, else in single quotes. */
export const shellWord = (text: string): string => (/^[A-Za-z0-9_@%+=:,./~-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/** The commands, each with its comment, that choose the backend before the first `pulumi stack init`. */
export function backendLines(backend: Backend): string[] {
  if (backend.url === undefined)
    return [
      "pulumi login   # no current login: this stores the stacks in Pulumi Cloud; to keep them in a " +
        "folder instead, run `mkdir -p ~/.pulumi-state && export PULUMI_BACKEND_URL=file://~/.pulumi-state " +
        "PULUMI_CONFIG_PASSPHRASE=<a passphrase you keep>`",
    ];
  const credentials = backend.credentialsLeftOut ? " (its user and password left out: add yours)" : "";
  return backend.from === "PULUMI_BACKEND_URL"
    ? [`export PULUMI_BACKEND_URL=${shellWord(backend.url)}   # the state backend you use now (PULUMI_BACKEND_URL)${credentials}`]
    : [`pulumi login ${shellWord(backend.url)}   # the state backend you are logged in to now${credentials}`];
}

/**
 * The comment of `pulumi stack init` on the backend: how its secrets are sealed, when that needs the user. Pulumi
 * Cloud (an `https://` backend) needs nothing; any other seals them with a passphrase; with no current login, the
 * user picks one of the two by the hint of backendLines, so the passphrase is said to be a folder's or a
 * bucket's only.
 */
export function stackInitNote(backend: Backend, env: NodeJS.ProcessEnv): string | undefined {
  if (backend.url !== undefined && /^https?:\/\//.test(backend.url)) return undefined;
  const set = env.PULUMI_CONFIG_PASSPHRASE !== undefined || env.PULUMI_CONFIG_PASSPHRASE_FILE !== undefined;
  const sealed = set
    ? "its secrets are sealed with the passphrase of PULUMI_CONFIG_PASSPHRASE (or _FILE), set in this shell"
    : "its secrets are sealed with a passphrase: export PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) first, and keep it";
  return backend.url === undefined
    ? `with the state in a folder or a bucket, ${sealed}; Pulumi Cloud seals them itself, with nothing to set`
    : sealed;
}
