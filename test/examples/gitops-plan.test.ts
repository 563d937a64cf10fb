/**
 * examples/gitops: what was reviewed is what gets applied, on the real CLI with the state in an S3 bucket (moto's
 * server) and the quickstart against the emulator. The pull request's `preview` writes plan.json and plan.md; the
 * merge's `up --plan-file plan.json` applies that plan with the engine held to it, or changes nothing and exits 5,
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
import { beyond, DECLARED, QUICKSTART, quickstartIn, quickstartObjects, type Run, runPipeline } from "./gitops-harness";
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

interface Plan {
  provenance: { stack: string; commit: string | null; state: { digest: string } };
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
    let runner: NodeJS.ProcessEnv;
    let before: string[];
    /** Every job's output and every file a job wrote, to search for secrets. */
    const seen: string[] = [];

    const job = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> => {
      const run = await runPipeline(args, { ...runner, ...env }, cli);
      seen.push(run.output);
      return run;
    };
    /** The pull request's preview into its own folder: plan.json (parsed), plan.md, and where they are. */
    const review = async (name: string, env: NodeJS.ProcessEnv = {}) => {
      const dir = join(work, "reviews", name);
      mkdirSync(dir, { recursive: true });
      const run = await job(["preview", "--report-dir", dir], env);
      expect(run.code, run.output).toBe(0);
      const json = readFileSync(join(dir, "plan.json"), "utf8");
      const markdown = readFileSync(join(dir, "plan.md"), "utf8");
      seen.push(json, markdown);
      return { run, dir, file: join(dir, "plan.json"), plan: JSON.parse(json) as Plan, markdown };
    };
    const merge = (planFile: string, env: NodeJS.ProcessEnv = {}) => job(["up", "--plan-file", planFile], env);
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
      const programDir = quickstartIn(work);
      const native: NodeJS.ProcessEnv = {};
      if (form === "native") {
        const program = join(programDir, "index.ts");
        writeFileSync(program, readFileSync(program, "utf8").replaceAll("new gms.", "new gms.native."));
        const bin = join(work, "bin");
        mkdirSync(bin);
        chmodSync(join(ROOT, "dist", "plugin", "main.js"), 0o755);
        symlinkSync(join(ROOT, "dist", "plugin", "main.js"), join(bin, "pulumi-resource-gms"));
        native.PATH = [cli!.dir, bin, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);
      }
      runner = {
        ...native,
        ...s3.env,
        GMS_BASE_URL: emulator.url,
        GMS_API_KEY: emulator.apiKey,
        OPENAI_API_KEY: OPENAI_KEY,
        PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
        PULUMI_BACKEND_URL: s3.url,
        PULUMI_HOME: join(work, "pulumi-home"),
        GMS_PROGRAM_DIR: programDir,
        GMS_STACK: "reviewed",
        GMS_COMMIT: "0123456789abcdef0123456789abcdef01234567",
      };
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
      "review, then merge: the merge applies the reviewed plan and nothing else",
      async () => {
        const { plan, markdown, file } = await review("first");
        expect(plan.provenance).toMatchObject({ stack: "reviewed", commit: runner.GMS_COMMIT });
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
        expect(markdown).toContain(`commit \`${runner.GMS_COMMIT}\``);

        const applied = await merge(file);
        expect(applied.code, applied.output).toBe(0);
        expect(applied.output).toContain("the stack is as the reviewed plan");
        expect(applied.result?.changes).toEqual({ create: DECLARED + 1 });
        expect(beyond(await quickstartObjects(emulator, "name"), before)).toHaveLength(DECLARED);
        // The result line's outputs: the secret one masked.
        expect(applied.result?.outputs).toMatchObject({ providerKey: "[secret]", appDescription: "Answers customer questions" });

        const again = await review("after-first");
        expect(again.plan.steps).toEqual([]);
        expect(again.markdown).toContain("**No change**");
      },
      TIMEOUT,
    );

    it(
      "review, then a field renamed out of band: the merge changes nothing, exits 5 and names the field; a fresh review puts it back",
      async () => {
        const reviewed = await review("rename");
        expect(reviewed.plan.steps).toEqual([]);
        const helpdesk = (await apps()).find((app) => app.name === "Helpdesk")!;
        expect((await callOverHttp(emulator, "PUT", `/apps/${helpdesk.guid}`, { name: "Helpdesk (renamed by hand)" })).status).toBe(200);

        const refused = await merge(reviewed.file);
        expect(refused.code, refused.output).toBe(5);
        expect(refused.result).toBeUndefined();
        const diff = planDiff(reviewed.dir);
        expect(diff).toContain("`helpdesk` (App): now it would update it, a step the reviewed plan does not have");
        expect(refused.output).toContain("the stack differs from the reviewed plan, so this job changed nothing");
        expect(refused.output).toContain(join(reviewed.dir, "plan-diff.md"));
        expect((await apps()).find((app) => app.guid === helpdesk.guid)?.name).toBe("Helpdesk (renamed by hand)");

        const fresh = await review("rename-again");
        const step = fresh.plan.steps.find((each) => each.resource === "helpdesk")!;
        expect(step).toMatchObject({ op: "update", fields: [{ field: "name", old: "Helpdesk (renamed by hand)", new: "Helpdesk" }] });
        const applied = await merge(fresh.file);
        expect(applied.code, applied.output).toBe(0);
        expect((await apps()).find((app) => app.guid === helpdesk.guid)?.name).toBe("Helpdesk");
      },
      TIMEOUT,
    );

    it(
      "review, then another merge that changed the same stack: exit 5, the field's reviewed and present values named",
      async () => {
        const reviewed = await review("description-a", { GMS_APP_DESCRIPTION: "Answers in English" });
        expect(reviewed.plan.steps).toEqual([
          expect.objectContaining({
            resource: "helpdesk",
            op: "update",
            fields: [{ field: "description", old: "Answers customer questions", new: "Answers in English" }],
          }),
        ]);
        const other = await job(["up"], { GMS_APP_DESCRIPTION: "Answers in French" });
        expect(other.code, other.output).toBe(0);
        expect(other.output).toContain("no reviewed plan (--plan-file): applying what the program and the workspace say now");

        const refused = await merge(reviewed.file, { GMS_APP_DESCRIPTION: "Answers in English" });
        expect(refused.code, refused.output).toBe(5);
        expect(planDiff(reviewed.dir)).toContain(
          '`helpdesk` (App): field `description`: reviewed "Answers customer questions" → "Answers in English"; ' +
            'now "Answers in French" → "Answers in English"',
        );
        expect((await apps()).find((app) => app.name === "Helpdesk")).toBeDefined();
        const description = (await callOverHttp(emulator, "GET", `/apps/${(await apps()).find((app) => app.name === "Helpdesk")!.guid}`))
          .body.description;
        expect(description).toBe("Answers in French");
      },
      TIMEOUT,
    );

    it(
      "a key rotation's plan names both replacements; a merge with another key than the reviewed one changes nothing; with it, it applies",
      async () => {
        const rotation = await review("rotation", { OPENAI_API_KEY: ROTATED_KEY, GMS_APP_DESCRIPTION: "Answers in French" });
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
        const otherKey = await merge(rotation.file, { OPENAI_API_KEY: OTHER_KEY, GMS_APP_DESCRIPTION: "Answers in French" });
        expect(otherKey.code, otherKey.output).toBe(5);
        expect(planDiff(rotation.dir)).toContain("the secret `openaiKey` is not the value the review was made with");
        expect((await callOverHttp(emulator, "GET", "/providers")).body).toEqual(connectionsBefore);

        const applied = await merge(rotation.file, { OPENAI_API_KEY: ROTATED_KEY, GMS_APP_DESCRIPTION: "Answers in French" });
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
        const leak = await runPipeline(["up"], { ...runner, OPENAI_API_KEY: ROTATED_KEY, GMS_APP_DESCRIPTION: ROTATED_KEY }, cli);
        expect(leak.code, leak.output).toBe(0);
        const line = leak.output.split("\n").find((text) => text.startsWith("result: "))!;
        expect(line).not.toContain(ROTATED_KEY);
        expect(leak.result?.outputs).toMatchObject({ appDescription: "[secret]", providerKey: "[secret]" });
        const destroyed = await job(["destroy"], { OPENAI_API_KEY: ROTATED_KEY });
        expect(destroyed.code, destroyed.output).toBe(0);
        expect(await quickstartObjects(emulator, "name")).toEqual(before);
        expect(existsSync(join(work, "reviews", "first", "plan-diff.md"))).toBe(false);
      },
      TIMEOUT,
    );
  },
);
