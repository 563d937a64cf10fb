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
		openai, err := gms.NewProviderConnection(ctx, "openai", &gms.ProviderConnectionArgs{
			Provider: pulumi.String("openai"),
			Key:      openaiKey,
			Nickname: pulumi.String("OpenAI (fine-tuning)"),
			Default:  pulumi.Bool(true),
		})
		if err != nil {
			return err
		}
		baseModel, err := gms.NewModel(ctx, "baseModel", &gms.ModelArgs{
			Llm:      pulumi.String("gpt-4o-mini"),
			Provider: pulumi.String("openai"),
			Key:      openaiKey,
		}, pulumi.DependsOn([]pulumi.Resource{
			openai,
		}))
		if err != nil {
			return err
		}
		trainingSet, err := gms.NewDataset(ctx, "trainingSet", &gms.DatasetArgs{
			Name:        pulumi.String("Support tone"),
			Description: pulumi.String("Replies in the house tone"),
			App:         pulumi.String(draftReply.App),
		})
		if err != nil {
			return err
		}
		supportTone, err := gms.NewFineTune(ctx, "supportTone", &gms.FineTuneArgs{
			Name:    pulumi.String("Support tone"),
			App:     pulumi.String(draftReply.App),
			Dataset: trainingSet.ID(),
			DataIds: pulumi.IntArray{
				pulumi.Int(1),
				pulumi.Int(2),
				pulumi.Int(3),
				pulumi.Int(4),
				pulumi.Int(5),
				pulumi.Int(6),
				pulumi.Int(7),
				pulumi.Int(8),
				pulumi.Int(9),
				pulumi.Int(10),
			},
			BaseModel:          pulumi.String("gpt-4o-mini"),
			ProviderConnection: baseModel.WorkspaceModelProviderId,
			WaitTimeoutSeconds: pulumi.Float64(600),
		})
		if err != nil {
			return err
		}
		ctx.Export("fineTuneGuid", supportTone.Guid)
		ctx.Export("fineTuneStatus", supportTone.Status)
		ctx.Export("vendorFinetuneName", supportTone.VendorFinetuneName)
		return nil
	})
}
