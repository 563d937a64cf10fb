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
		exactMatch, err := gms.GetEvalType(ctx, &gms.GetEvalTypeArgs{
			Name: "Exact match",
		}, nil)
		if err != nil {
			return err
		}
		helpfulness, err := gms.GetEvalType(ctx, &gms.GetEvalTypeArgs{
			Name: "Helpfulness",
		}, nil)
		if err != nil {
			return err
		}
		records, err := gms.GetDataRecords(ctx, &gms.GetDataRecordsArgs{
			App:   "Support",
			Limit: pulumi.IntRef(2),
		}, nil)
		if err != nil {
			return err
		}
		regressions, err := gms.NewDataset(ctx, "regressions", &gms.DatasetArgs{
			Name: pulumi.String("Reply regressions"),
			App:  pulumi.String(draftReply.App),
			Data: pulumi.StringArray{
				pulumi.String(records[0].Guid),
				pulumi.String(records[1].Guid),
			},
		})
		if err != nil {
			return err
		}
		replyQuality, err := gms.NewEval(ctx, "replyQuality", &gms.EvalArgs{
			Name:    pulumi.String("Reply quality"),
			Action:  pulumi.String(draftReply.Guid),
			Dataset: regressions.ID(),
			EvalTypes: gms.EvalEvalTypeArray{
				&gms.EvalEvalTypeArgs{
					Guid: pulumi.String(exactMatch.Guid),
				},
				&gms.EvalEvalTypeArgs{
					Guid: pulumi.String(helpfulness.Guid),
				},
			},
		})
		if err != nil {
			return err
		}
		ctx.Export("evalGuid", replyQuality.Guid)
		ctx.Export("evalDataType", replyQuality.DataType)
		return nil
	})
}
