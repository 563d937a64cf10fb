package main

import (
	"github.com/pulumi-gms/pulumi-gms/sdk/go/gms"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		openaiKey := cfg.RequireSecret("openaiKey")
		draftReply, err := gms.GetAction(ctx, &gms.GetActionArgs{
			App:  "Support",
			Name: "Draft reply",
		}, nil)
		if err != nil {
			return err
		}
		conciseReply, err := gms.GetAction(ctx, &gms.GetActionArgs{
			App:  "Support",
			Name: "Draft reply (concise)",
		}, nil)
		if err != nil {
			return err
		}
		records, err := gms.GetDataRecords(ctx, &gms.GetDataRecordsArgs{
			App:   "Support",
			Limit: pulumi.IntRef(3),
		}, nil)
		if err != nil {
			return err
		}
		exactMatch, err := gms.GetEvalType(ctx, &gms.GetEvalTypeArgs{
			Name: "Exact match",
		}, nil)
		if err != nil {
			return err
		}
		handbook, err := gms.GetContext(ctx, &gms.GetContextArgs{
			Name: "Handbook",
		}, nil)
		if err != nil {
			return err
		}
		assistant, err := gms.NewApp(ctx, "assistant", &gms.AppArgs{
			Name:        pulumi.String("Support assistant"),
			Description: pulumi.String("Drafts replies for the support team"),
		})
		if err != nil {
			return err
		}
		escalation, err := gms.NewWorkflow(ctx, "escalation", &gms.WorkflowArgs{
			Name: pulumi.String("Escalation"),
			App:  assistant.ID(),
		})
		if err != nil {
			return err
		}
		openai, err := gms.NewProviderConnection(ctx, "openai", &gms.ProviderConnectionArgs{
			Provider: pulumi.String("openai"),
			Key:      openaiKey,
			Nickname: pulumi.String("OpenAI (support)"),
			Default:  pulumi.Bool(true),
		})
		if err != nil {
			return err
		}
		replyModel, err := gms.NewModel(ctx, "replyModel", &gms.ModelArgs{
			Llm:      pulumi.String("gpt-4o-mini"),
			Provider: pulumi.String("openai"),
			Key:      openaiKey,
		}, pulumi.DependsOn([]pulumi.Resource{
			openai,
		}))
		if err != nil {
			return err
		}
		reviewed, err := gms.NewDataset(ctx, "reviewed", &gms.DatasetArgs{
			Name: pulumi.String("Reviewed replies"),
			App:  pulumi.String(draftReply.App),
			Data: pulumi.StringArray{
				pulumi.String(records[0].Guid),
				pulumi.String(records[1].Guid),
				pulumi.String(records[2].Guid),
			},
		})
		if err != nil {
			return err
		}
		replyQuality, err := gms.NewEval(ctx, "replyQuality", &gms.EvalArgs{
			Name:    pulumi.String("Reply quality"),
			Action:  pulumi.String(draftReply.Guid),
			Dataset: reviewed.ID(),
			EvalTypes: gms.EvalEvalTypeArray{
				&gms.EvalEvalTypeArgs{
					Guid: pulumi.String(exactMatch.Guid),
				},
			},
		})
		if err != nil {
			return err
		}
		conciseReplies, err := gms.NewExperiment(ctx, "conciseReplies", &gms.ExperimentArgs{
			Name:            pulumi.String("Concise replies"),
			App:             pulumi.String(draftReply.App),
			PrimaryAction:   pulumi.String(draftReply.Guid),
			SecondaryAction: pulumi.String(conciseReply.Guid),
		})
		if err != nil {
			return err
		}
		handbookSource, err := gms.NewContextSource(ctx, "handbookSource", &gms.ContextSourceArgs{
			Context:         pulumi.String(handbook.Guid),
			File:            pulumi.NewFileAsset("handbook.md"),
			Process:         pulumi.Bool(true),
			WaitForIndexing: pulumi.Any(true),
		})
		if err != nil {
			return err
		}
		ctx.Export("appSlug", assistant.Slug)
		ctx.Export("workflowSlug", escalation.Slug)
		ctx.Export("modelConnection", replyModel.ProviderGuid)
		ctx.Export("evalDataType", replyQuality.DataType)
		ctx.Export("experimentStatus", conciseReplies.Status)
		ctx.Export("handbookStatus", handbookSource.IndexingStatus)
		return nil
	})
}
