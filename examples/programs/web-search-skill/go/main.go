package main

import (
	"github.com/pulumi-gms/pulumi-gms/sdk/go/gms"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		webSearch, err := gms.NewSkill(ctx, "webSearch", &gms.SkillArgs{
			Name: pulumi.String("web-search"),
			Type: pulumi.String("web"),
		})
		if err != nil {
			return err
		}
		ctx.Export("skillGuid", webSearch.Guid)
		return nil
	})
}
