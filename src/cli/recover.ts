/**
 * `pulumi-gms recover`: settles the pending operations a killed `pulumi up` left in a stack (src/recover). It runs in
 * the project's folder with the Pulumi CLI the user has; it takes no secret at all (the stack and GMS_API_KEY give
 * them), and prints none.
 */
import type { RecoverSettings } from "../recover/command";
import { type Command, type CommandIo, EXIT, parseFlags, runWith, UsageError } from "./command";

const USAGE = `usage: pulumi-gms recover --stack NAME [--yes] [--choose URN=GUID]... [--release-lock] [--pulumi PATH] [--json]

After \`pulumi up\` was killed with creates in flight, in the folder of its Pulumi project: reads the stack's pending
operations and lock, finds the object of each pending create of a gms resource (native gms:index:<Kind> and dynamic
alike) with its kind's own lookup (its identifying fields, made since the interrupted update began, held by no
resource of the stack), records it in the stack and refreshes it; a create whose object was never made is dropped.
A plain \`pulumi up\` then makes only what is still missing. Without --yes it prints what it would do and changes
nothing.

  --stack NAME         the stack (required)
  --yes                do it: release the killed run's lock (pulumi cancel), record the objects and clear the
                       pending operations (pulumi stack import), refresh what it recorded (pulumi refresh --target)
  --choose URN=GUID    the object the pending create of URN made, where recover found several (or one it cannot
                       tell from older ones): recorded as it; URN=none drops the create. Repeat for several URNs
  --release-lock       every run holding the stack's lock is gone, whichever machine it ran on (a CI system that
                       runs one job of this stack at a time, and this is that job): release it. A process still
                       running on this machine keeps it
  --pulumi PATH        the Pulumi CLI to run (default: pulumi on PATH)
  --json               print the plan and what was done as one JSON document on stdout

It releases a lock only when every holder is a run of this machine whose process is gone (or with --release-lock); a
run still going, or one of another machine, is named and nothing is changed. On a backend other than file://, it
learns the holders when the CLI refuses its import. Two objects that match one create are never guessed between:
each is named, with its creation time, and nothing is changed until --choose (or deleting one) settles it.
Credentials: each resource's own connection, else its provider's configuration in the stack, else GMS_BASE_URL and
GMS_API_KEY; the lookups keep to the rate the provider was held to (gms:maxRequestsPerSecond, else
GMS_MAX_REQUESTS_PER_SECOND).
Exit status: 0 done (or, without --yes, it could be done), 1 failed or left to you (named), 2 usage.`;

/** The flags, checked. */
function settingsFrom(argv: string[]): RecoverSettings | "help" {
  const { values, positionals } = parseFlags(argv, {
    stack: { type: "string" },
    yes: { type: "boolean", short: "y" },
    choose: { type: "string", multiple: true },
    "release-lock": { type: "boolean" },
    pulumi: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw new UsageError(`recover takes no arguments, only flags (got ${positionals.join(" ")})`);
  if (!values.stack) throw new UsageError("--stack NAME is required: the stack whose pending operations to settle");
  if (values.pulumi === "") throw new UsageError("--pulumi needs a value");
  const choices = new Map<string, string | null>();
  for (const choice of values.choose ?? []) {
    // A URN may hold "=" in a resource's name, a GUID never: the last one separates them.
    const at = choice.lastIndexOf("=");
    const urn = choice.slice(0, at);
    const guid = choice.slice(at + 1);
    if (at <= 0 || guid === "" || !urn.startsWith("urn:pulumi:"))
      throw new UsageError(`--choose takes URN=GUID (or URN=none), not ${JSON.stringify(choice)}`);
    if (choices.has(urn)) throw new UsageError(`--choose names ${urn} twice`);
    choices.set(urn, guid === "none" ? null : guid);
  }
  return {
    stack: values.stack,
    yes: values.yes ?? false,
    pulumi: values.pulumi ?? "pulumi",
    json: values.json ?? false,
    choices,
    releaseLock: values["release-lock"] ?? false,
  };
}

const run = (argv: string[], io: CommandIo): Promise<number> =>
  runWith(
    recoverCommand,
    io,
    () => settingsFrom(argv),
    async (settings) => {
      // Loaded only to run: `pulumi-gms --help` stays cheap.
      const { recoverWith } = await import("../recover/command.js");
      return EXIT[await recoverWith(settings, io)];
    },
  );

export const recoverCommand: Command = {
  name: "recover",
  summary: "settle the pending creates a killed `pulumi up` left in a stack, without a duplicate",
  usage: USAGE,
  run,
};
