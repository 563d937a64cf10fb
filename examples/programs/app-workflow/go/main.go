package main

import (
	"github.com/pulumi-gms/pulumi-gms/sdk/go/gms"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		helpdesk, err := gms.NewApp(ctx, "helpdesk", &gms.AppArgs{
			Name:        pulumi.String("Helpdesk"),
			Description: pulumi.String("Answers customer questions"),
		})
		if err != nil {
			return err
		}
		triage, err := gms.NewWorkflow(ctx, "triage", &gms.WorkflowArgs{
			Name: pulumi.String("Triage"),
			App:  helpdesk.ID(),
		})
		if err != nil {
			return err
		}
		ctx.Export("appGuid", helpdesk.Guid)
		ctx.Export("appSlug", helpdesk.Slug)
		ctx.Export("workflowSlug", triage.Slug)
		return nil
	})
}
