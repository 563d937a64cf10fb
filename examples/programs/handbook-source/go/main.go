package main

import (
	"github.com/pulumi-gms/pulumi-gms/sdk/go/gms"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		handbook, err := gms.GetContext(ctx, &gms.GetContextArgs{
			Name: "Handbook",
		}, nil)
		if err != nil {
			return err
		}
		handbookSource, err := gms.NewContextSource(ctx, "handbookSource", &gms.ContextSourceArgs{
			Context: pulumi.String(handbook.Guid),
			File:    pulumi.NewFileAsset("handbook.md"),
			SplitterConfig: &gms.ContextSourceSplitterConfigArgs{
				ChunkSize:    pulumi.Int(400),
				ChunkOverlap: pulumi.Int(40),
			},
			Process:         pulumi.Bool(true),
			WaitForIndexing: pulumi.Any(true),
		})
		if err != nil {
			return err
		}
		ctx.Export("sourceGuid", handbookSource.Guid)
		ctx.Export("indexingStatus", handbookSource.IndexingStatus)
		ctx.Export("indexingMetadata", handbookSource.IndexingMetadata)
		return nil
	})
}
