import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { automationProgram, describeScenario, goModuleOnRelease, run, STACK } from "./scenario";

const LANGUAGE = "Go";

/** `driver <up|preview|destroy> <stage> [legacy GUID]`: stage values from stages.json beside it, keys from the environment. */
const DRIVER = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pulumi-gms/pulumi-gms/sdk/go/gms"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

type values struct {
	App        struct{ Name, Description string }
	Connection struct{ Provider, Nickname string }
	Model      struct{ Llm, Url string }
	Workflow   struct{ Name string }
	Legacy     struct{ Name, Description string }
}

func main() {
	if err := drive(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func drive(operation, stage string, rest []string) error {
	executable, err := os.Executable()
	if err != nil {
		return err
	}
	here := filepath.Dir(executable)
	text, err := os.ReadFile(filepath.Join(here, "stages.json"))
	if err != nil {
		return err
	}
	var stages map[string]values
	if err := json.Unmarshal(text, &stages); err != nil {
		return err
	}
	v := stages[stage]
	program := func(ctx *pulumi.Context) error {
		key := config.RequireSecret(ctx, "openaiKey")
		support, err := gms.NewApp(ctx, "support", &gms.AppArgs{Name: pulumi.String(v.App.Name), Description: pulumi.String(v.App.Description)})
		if err != nil {
			return err
		}
		openai, err := gms.NewProviderConnection(ctx, "openai", &gms.ProviderConnectionArgs{
			Provider: pulumi.String(v.Connection.Provider), Nickname: pulumi.String(v.Connection.Nickname), Key: key,
		})
		if err != nil {
			return err
		}
		gpt, err := gms.NewModel(ctx, "gpt", &gms.ModelArgs{
			Llm: pulumi.String(v.Model.Llm), Url: pulumi.String(v.Model.Url), Provider: openai.Guid, Key: key,
		})
		if err != nil {
			return err
		}
		triage, err := gms.NewWorkflow(ctx, "triage", &gms.WorkflowArgs{Name: pulumi.String(v.Workflow.Name), App: support.ID().ToStringOutput()})
		if err != nil {
			return err
		}
		ctx.Export("appGuid", support.Guid)
		ctx.Export("connectionGuid", openai.Guid)
		ctx.Export("modelGuid", gpt.Guid)
		ctx.Export("modelLink", gpt.ProviderGuid)
		ctx.Export("workflowGuid", triage.Guid)
		ctx.Export("workflowApp", triage.App)
		if len(rest) > 0 {
			legacy, err := gms.NewApp(ctx, "legacy", &gms.AppArgs{
				Name: pulumi.String(v.Legacy.Name), Description: pulumi.String(v.Legacy.Description),
			}, pulumi.Import(pulumi.ID(rest[0])))
			if err != nil {
				return err
			}
			ctx.Export("legacyGuid", legacy.Guid)
		}
		return nil
	}

	ctx := context.Background()
	command, err := auto.NewPulumiCommand(&auto.PulumiCommandOptions{Root: os.Getenv("PULUMI_CLI_ROOT"), SkipVersionCheck: true})
	if err != nil {
		return err
	}
	stack, err := auto.UpsertStackInlineSource(ctx, "${STACK}", "gms-release-go", program,
		auto.WorkDir(here), auto.Pulumi(command), auto.SecretsProvider("passphrase"))
	if err != nil {
		return err
	}
	for _, setting := range []struct {
		key, value string
		secret     bool
	}{{"gms:baseUrl", os.Getenv("GMS_URL"), false}, {"gms:apiKey", os.Getenv("GMS_KEY"), true}, {"openaiKey", os.Getenv("OPENAI_KEY"), true}} {
		if err := stack.SetConfig(ctx, setting.key, auto.ConfigValue{Value: setting.value, Secret: setting.secret}); err != nil {
			return err
		}
	}
	switch operation {
	case "up":
		result, err := stack.Up(ctx, optup.ProgressStreams(os.Stdout))
		if err != nil {
			return err
		}
		outputs := map[string]interface{}{}
		for name, output := range result.Outputs {
			outputs[name] = output.Value
		}
		text, err := json.Marshal(outputs)
		if err != nil {
			return err
		}
		fmt.Printf("outputs %s\\n", text)
	case "preview":
		_, err = stack.Preview(ctx, optpreview.ProgressStreams(os.Stdout), optpreview.ExpectNoChanges())
	default:
		_, err = stack.Destroy(ctx, optdestroy.ProgressStreams(os.Stdout))
	}
	return err
}
`;

describeScenario(LANGUAGE, "release/go.test.ts", async (bed) => {
  const problem = goModuleOnRelease(bed.dir, bed.release, "gms-release-go");
  if (problem) return problem;
  writeFileSync(join(bed.dir, "main.go"), DRIVER);
  try {
    await run("go", ["mod", "tidy"], { cwd: bed.dir, env: process.env });
    await run("go", ["build", "-trimpath", "-o", "driver", "."], { cwd: bed.dir, env: process.env });
  } catch (error) {
    return `the Go program does not build: ${(error as Error).message}`;
  }
  return automationProgram(bed, LANGUAGE, [join(bed.dir, "driver")]);
});
