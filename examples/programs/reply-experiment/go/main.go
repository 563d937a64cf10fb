package main

import (
	"github.com/pulumi-gms/pulumi-gms/sdk/go/gms"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
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
		conciseReplies, err := gms.NewExperiment(ctx, "conciseReplies", &gms.ExperimentArgs{
			Name:            pulumi.String("Concise replies"),
			App:             pulumi.String(draftReply.App),
			PrimaryAction:   pulumi.String(draftReply.Guid),
			SecondaryAction: pulumi.String(conciseReply.Guid),
		})
		if err != nil {
			return err
		}
		ctx.Export("experimentGuid", conciseReplies.Guid)
		ctx.Export("experimentStatus", conciseReplies.Status)
		return nil
	})
}
