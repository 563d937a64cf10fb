import pulumi
import pulumi_gms as gms

draft_reply = gms.get_action(app="Support",
    name="Draft reply")
exact_match = gms.get_eval_type(name="Exact match")
helpfulness = gms.get_eval_type(name="Helpfulness")
records = gms.get_data_records(app="Support",
    limit=2)
regressions = gms.Dataset("regressions",
    name="Reply regressions",
    app=draft_reply.app,
    data=[
        records[0]["guid"],
        records[1]["guid"],
    ])
reply_quality = gms.Eval("replyQuality",
    name="Reply quality",
    action=draft_reply.guid,
    dataset=regressions.id,
    eval_types=[
        {
            "guid": exact_match.guid,
        },
        {
            "guid": helpfulness.guid,
        },
    ])
pulumi.export("evalGuid", reply_quality.guid)
pulumi.export("evalDataType", reply_quality.data_type)
