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
		records, err := gms.GetDataRecords(ctx, &gms.GetDataRecordsArgs{
			App:   "Support",
			Limit: pulumi.IntRef(3),
		}, nil)
		if err != nil {
			return err
		}
		golden, err := gms.NewDataset(ctx, "golden", &gms.DatasetArgs{
			Name:        pulumi.String("Golden answers"),
			Description: pulumi.String("Replies a support lead reviewed"),
			App:         pulumi.String(draftReply.App),
			Data: pulumi.StringArray{
				pulumi.String(records[0].Guid),
				pulumi.String(records[1].Guid),
				pulumi.String(records[2].Guid),
			},
		})
		if err != nil {
			return err
		}
		ctx.Export("datasetGuid", golden.Guid)
		ctx.Export("datasetRecords", golden.Data)
		return nil
	})
}
