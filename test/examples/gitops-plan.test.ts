/**
 * examples/gitops: what was reviewed is what gets applied, on the real CLI with the state in an S3 bucket (moto's
 * server) and the quickstart against the emulator. The pull request's `preview` runs on runner A and writes plan.json
 * and plan.md (the artifact); the merge's `up --plan-file plan.json` runs on runner B, each job in a checkout and a
 * PULUMI_HOME of its own (no Pulumi.<stack>.yaml comes with it: the stack's salt is read from the backend), for a new
 * stack and for existing ones, and applies that plan with the engine held to it, or changes nothing and exits 5,
 * writing plan-diff.md, when a fresh plan differs: a field renamed out of band since the review, another merge that
 * changed the stack, a secret other than the reviewed one. A key rotation's plan names both replacements. No secret
 * shows in plan.json, plan.md, plan-diff.md or any job's output. Each case runs on the dynamic resources and on the
 * native ones of the provider plugin: Pulumi's update plans hold for both. Required under CI=true, like the other
 * bucket suites.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import {
  beyond,
  type Checkout,
  DECLARED,
  QUICKSTART,
  quickstartObjects,
  type Run,
  type Runner,
  type RunnerOptions,
  runner,
} from "./gitops-harness";
import { type S3Backend, s3BackendFor, startS3Backend } from "./s3-backend";

const FILE = "test/examples/gitops-plan.test.ts";
const cli = pulumiCliFor(FILE);
const moto = s3BackendFor(FILE);
const OPENAI_KEY = "sk-gitops-plan-test-0001";
const ROTATED_KEY = "sk-gitops-plan-test-0002";
const OTHER_KEY = "sk-gitops-plan-test-0003";
const PASSPHRASE = "gitops plan passphrase";
const TIMEOUT = 400_000;
const ROOT = join(__dirname, "..", "..");
const COMMIT = "0123456789abcdef0123456789abcdef01234567";

interface Plan {
  provenance: { stack: string; commit: string | null; state: { digest: string }; secretsProvider?: string };
  counts: Record<string, number>;
  steps: {
    urn: string;
    resource: string;
    kind: string;
    op: string;
    fields: { field: string; old: unknown; new: unknown }[];
    replaceBecause?: string[];
  }[];
  secretDigests: Record<string, string>;
}

/**
 * Both provider forms: the quickstart as it is (dynamic resources), and with the native classes (`gms.native.X`, served
 * by the provider plugin, `pulumi-resource-gms` on the runner's PATH as the engine finds a plugin).
 */
describe.skipIf(cli === undefined || moto === undefined).each([{ form: "dynamic" }, { form: "native" }])(
  `examples/gitops: a reviewed plan and a merge that keeps to it, $form resources (${cliName(cli)}, moto)`,
  ({ form }) => {
    let work: string;
    let emulator: RunningEmulator;
    let s3: S3Backend;
    /** The pull request's runner (A) and the merge's (B). */
    let review: Runner;
    let merge: Runner;
    let options: RunnerOptions;
    let before: string[];
    /** Every job's output and every file a job wrote, to search for secrets. */
    const seen: string[] = [];

    /** The pull request's preview on runner A into its artifact's folder: plan.json (parsed), plan.md, and where they are. */
    const reviewed = async (name: string, env: NodeJS.ProcessEnv = {}) => {
      const dir = join(work, "reviews", name);
      mkdirSync(dir, { recursive: true });
      const run = await review.job(["preview", "--report-dir", dir], env);
      expect(run.code, run.output).toBe(0);
      const json = readFileSync(join(dir, "plan.json"), "utf8");
      const markdown = readFileSync(join(dir, "plan.md"), "utf8");
      seen.push(json, markdown);
      return { run, dir, file: join(dir, "plan.json"), plan: JSON.parse(json) as Plan, markdown };
    };
    /** The merge on runner B, with the artifact's plan.json. */
    const merged = (planFile: string, env: NodeJS.ProcessEnv = {}) => merge.job(["up", "--plan-file", planFile], env);
    const planDiff = (dir: string) => {
      const text = readFileSync(join(dir, "plan-diff.md"), "utf8");
      seen.push(text);
      return text;
    };
    const apps = async () => (await callOverHttp(emulator, "GET", "/apps?limit=100")).body.data as { guid: string; name: string }[];

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), "gms-gitops-plan-"));
      emulator = await startEmulator({ port: 0, fixtures: join(QUICKSTART, "fixtures.yaml") });
      s3 = await startS3Backend();
      const native: NodeJS.ProcessEnv = {};
      // The native form: each checkout's quickstart with the plugin's classes.
      const prepare = (checkout: Checkout) => {
        const program = join(checkout.quickstart, "index.ts");
        writeFileSync(program, readFileSync(program, "utf8").replaceAll("new gms.", "new gms.native."));
      };
      if (form === "native") {
        const bin = join(work, "bin");
        mkdirSync(bin);
        chmodSync(join(ROOT, "dist", "plugin", "main.js"), 0o755);
        symlinkSync(join(ROOT, "dist", "plugin", "main.js"), join(bin, "pulumi-resource-gms"));
        native.PATH = [cli!.dir, bin, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);
      }
      const env = {
        ...native,
        ...s3.env,
        GMS_BASE_URL: emulator.url,
        GMS_API_KEY: emulator.apiKey,
        OPENAI_API_KEY: OPENAI_KEY,
        PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
        PULUMI_BACKEND_URL: s3.url,
        GMS_STACK: "reviewed",
        GMS_COMMIT: COMMIT,
      };
      options = { env, cli, onRun: (run: Run) => seen.push(run.output), ...(form === "native" ? { prepare } : {}) };
      review = runner("a", work, options);
      merge = runner("b", work, options);
      before = await quickstartObjects(emulator, "name");
    }, 120_000);

    afterAll(async () => {
      for (const text of seen)
        for (const secret of [emulator.apiKey, OPENAI_KEY, ROTATED_KEY, OTHER_KEY, PASSPHRASE]) expect(text).not.toContain(secret);
      await s3?.close();
      await emulator?.close();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it(
      "review on runner A, merge on runner B: a new stack's reviewed plan applies there, and nothing else",
      async () => {
        const { plan, markdown, file } = await reviewed("first");
        expect(plan.provenance).toMatchObject({ stack: "reviewed", commit: COMMIT });
        expect(plan.provenance.secretsProvider).toMatch(/^passphrase \(settings sha256:[0-9a-f]{12}\)$/);
        expect(plan.counts).toMatchObject({ create: DECLARED });
        expect(plan.steps.map((step) => `${step.op} ${step.resource}`).sort()).toEqual(
          ["helpdesk", "triage", "openai", "gpt-4o-mini", "golden-answers", "reply-quality", "concise-replies", "web-search", "handbook"]
            .map((name) => `create ${name}`)
            .sort(),
        );
        // The form's resources: the plugin's types, or the dynamic provider's.
        for (const step of plan.steps) expect(step.urn).toContain(form === "native" ? "::gms:index:" : "::pulumi-nodejs:dynamic/gms:");
        // The key is a secret: "[secret]" in the plan, its digest beside, never its value.
        const openai = plan.steps.find((step) => step.resource === "openai")!;
        expect(openai.fields).toContainEqual({ field: "key", old: null, new: "[secret]" });
        expect(Object.keys(plan.secretDigests).sort()).toEqual(["gms:apiKey", "openaiKey"]);
        expect(markdown).toContain("## Plan: stack `reviewed`");
        expect(markdown).toContain(`**${DECLARED} create**`);
        expect(markdown).toContain(`commit \`${COMMIT}\``);

        // Runner B's checkout has no Pulumi.reviewed.yaml: it takes the stack's salt from the backend, so the engine
        // plan runner A encrypted reads there.
        const applied = await merged(file);
        expect(applied.code, applied.output).toBe(0);
        expect(applied.output).toContain("pipeline: reviewed: its secrets settings (passphrase (settings sha256:");
        expect(applied.output).toContain("the stack is as the reviewed plan");
        expect(applied.output).not.toContain("message authentication failed");
        expect(applied.result?.changes).toEqual({ create: DECLARED + 1 });
        expect(applied.result?.plan?.heldTo).toBe("reviewed");
        expect(beyond(await quickstartObjects(emulator, "name"), before)).toHaveLength(DECLARED);
        // The result line's outputs: the secret one masked.
        expect(applied.result?.outputs).toMatchObject({ providerKey: "[secret]", appDescription: "Answers customer questions" });

        const again = await reviewed("after-first");
        expect(again.plan.steps).toEqual([]);
        expect(again.markdown).toContain("**No change**");
      },
      TIMEOUT,
    );

    it(
      "review, then a field renamed out of band: the merge changes nothing, exits 5 and names the field with both values",
      async () => {
        const review1 = await reviewed("rename");
        expect(review1.plan.steps).toEqual([]);
        const helpdesk = (await apps()).find((app) => app.name === "Helpdesk")!;
        expect((await callOverHttp(emulator, "PUT", `/apps/${helpdesk.guid}`, { name: "Helpdesk (renamed by hand)" })).status).toBe(200);

        const refused = await merged(review1.file);
        expect(refused.code, refused.output).toBe(5);
        expect(refused.result).toBeUndefined();
        const diff = planDiff(review1.dir);
        expect(diff).toContain("| Resource | Kind | Field | Reviewed | Now |");
        expect(diff).toContain("| `helpdesk` | App |  | no step | update |");
        expect(diff).toContain('| `helpdesk` | App | `name` | no change | update `"Helpdesk (renamed by hand)"` → `"Helpdesk"` |');
        expect(refused.output).toContain("the stack differs from the reviewed plan, so this job changed nothing");
        expect(refused.output).toContain(
          '`helpdesk` (App): field `name`: reviewed no change; now update "Helpdesk (renamed by hand)" → "Helpdesk"',
        );
        expect(refused.output).toContain(join(review1.dir, "plan-diff.md"));
        expect((await apps()).find((app) => app.guid === helpdesk.guid)?.name).toBe("Helpdesk (renamed by hand)");

        const fresh = await reviewed("rename-again");
        const step = fresh.plan.steps.find((each) => each.resource === "helpdesk")!;
        expect(step).toMatchObject({ op: "update", fields: [{ field: "name", old: "Helpdesk (renamed by hand)", new: "Helpdesk" }] });
        const applied = await merged(fresh.file);
        expect(applied.code, applied.output).toBe(0);
        expect((await apps()).find((app) => app.guid === helpdesk.guid)?.name).toBe("Helpdesk");
      },
      TIMEOUT,
    );

    it(
      "review, then another merge that changed the same stack: exit 5, the field's reviewed and present values named",
      async () => {
        const review1 = await reviewed("description-a", { GMS_APP_DESCRIPTION: "Answers in English" });
        expect(review1.plan.steps).toEqual([
          expect.objectContaining({
            resource: "helpdesk",
            op: "update",
            fields: [{ field: "description", old: "Answers customer questions", new: "Answers in English" }],
          }),
        ]);
        const other = await merge.job(["up"], { GMS_APP_DESCRIPTION: "Answers in French" });
        expect(other.code, other.output).toBe(0);
        expect(other.output).toContain("no reviewed plan (--plan-file): applying what the program and the workspace say now");

        const refused = await merged(review1.file, { GMS_APP_DESCRIPTION: "Answers in English" });
        expect(refused.code, refused.output).toBe(5);
        expect(planDiff(review1.dir)).toContain(
          '| `helpdesk` | App | `description` | update `"Answers customer questions"` → `"Answers in English"` | ' +
            'update `"Answers in French"` → `"Answers in English"` |',
        );
        const helpdesk = (await apps()).find((app) => app.name === "Helpdesk")!;
        expect((await callOverHttp(emulator, "GET", `/apps/${helpdesk.guid}`)).body.description).toBe("Answers in French");
      },
      TIMEOUT,
    );

    it(
      "a key rotation's plan names both replacements; a merge with another key than the reviewed one changes nothing; with it, it applies",
      async () => {
        const rotation = await reviewed("rotation", { OPENAI_API_KEY: ROTATED_KEY, GMS_APP_DESCRIPTION: "Answers in French" });
        const replaced = rotation.plan.steps.filter((step) => step.op === "replace");
        expect(replaced.map((step) => step.resource).sort()).toEqual(["gpt-4o-mini", "openai"]);
        for (const step of replaced) {
          expect(step.replaceBecause).toContain("key");
          expect(step.fields).toContainEqual({ field: "key", old: "[secret]", new: "[secret]" });
        }
        expect(rotation.markdown).toContain("### Replacements and deletions");
        expect(rotation.markdown).toMatch(/\*\*Replaces\*\* `openai` \(ProviderConnection\) `[0-9a-f-]{36}`: changing `key`/);
        expect(rotation.markdown).toMatch(/\*\*Replaces\*\* `gpt-4o-mini` \(Model\) `[0-9a-f-]{36}`: changing `key`/);
        // Replacements come first.
        expect(rotation.markdown.indexOf("Replaces")).toBeLessThan(rotation.markdown.indexOf("### Steps"));

        const connectionsBefore = (await callOverHttp(emulator, "GET", "/providers")).body as { guid: string }[];
        const otherKey = await merged(rotation.file, { OPENAI_API_KEY: OTHER_KEY, GMS_APP_DESCRIPTION: "Answers in French" });
        expect(otherKey.code, otherKey.output).toBe(5);
        expect(planDiff(rotation.dir)).toContain(
          "| the secret `openaiKey` |  |  | [secret] | [secret], not the value the review was made with |",
        );
        expect((await callOverHttp(emulator, "GET", "/providers")).body).toEqual(connectionsBefore);

        const applied = await merged(rotation.file, { OPENAI_API_KEY: ROTATED_KEY, GMS_APP_DESCRIPTION: "Answers in French" });
        expect(applied.code, applied.output).toBe(0);
        expect(applied.result?.changes).toMatchObject({ replace: 2 });
        const connectionsAfter = (await callOverHttp(emulator, "GET", "/providers")).body as { guid: string }[];
        expect(connectionsAfter).toHaveLength(1);
        expect(connectionsAfter[0]!.guid).not.toBe(connectionsBefore[0]!.guid);
      },
      TIMEOUT,
    );

    it(
      "masks a secret by its value in the result line, and destroy leaves the workspace as it was",
      async () => {
        // The App's description is the rotated key itself: a plain output that holds a secret. (The CLI's own
        // output prints the program's plain outputs as they are: only the result line is checked here.)
        const leaky = runner("b-leak", work, { ...options, onRun: undefined });
        const leak = await leaky.job(["up"], { OPENAI_API_KEY: ROTATED_KEY, GMS_APP_DESCRIPTION: ROTATED_KEY });
        expect(leak.code, leak.output).toBe(0);
        const line = leak.output.split("\n").find((text) => text.startsWith("result: "))!;
        expect(line).not.toContain(ROTATED_KEY);
        expect(leak.result?.outputs).toMatchObject({ appDescription: "[secret]", providerKey: "[secret]" });
        const destroyed = await merge.job(["destroy"], { OPENAI_API_KEY: ROTATED_KEY });
        expect(destroyed.code, destroyed.output).toBe(0);
        expect(await quickstartObjects(emulator, "name")).toEqual(before);
        expect(existsSync(join(work, "reviews", "first", "plan-diff.md"))).toBe(false);
      },
      TIMEOUT,
    );
  },
);
