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
		openai, err := gms.NewProviderConnection(ctx, "openai", &gms.ProviderConnectionArgs{
			Provider: pulumi.String("openai"),
			Key:      openaiKey,
			Nickname: pulumi.String("OpenAI (production)"),
			Default:  pulumi.Bool(true),
		})
		if err != nil {
			return err
		}
		gpt4oMini, err := gms.NewModel(ctx, "gpt4oMini", &gms.ModelArgs{
			Llm:      pulumi.String("gpt-4o-mini"),
			Provider: pulumi.String("openai"),
			Key:      openaiKey,
			Default:  pulumi.Bool(true),
		}, pulumi.DependsOn([]pulumi.Resource{
			openai,
		}))
		if err != nil {
			return err
		}
		ctx.Export("connectionGuid", openai.Guid)
		ctx.Export("modelGuid", gpt4oMini.Guid)
		ctx.Export("modelConnection", gpt4oMini.ProviderGuid)
		return nil
	})
}
