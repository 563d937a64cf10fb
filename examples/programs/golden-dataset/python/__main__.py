import pulumi
import pulumi_gms as gms

draft_reply = gms.get_action(app="Support",
    name="Draft reply")
records = gms.get_data_records(app="Support",
    limit=3)
golden = gms.Dataset("golden",
    name="Golden answers",
    description="Replies a support lead reviewed",
    app=draft_reply.app,
    data=[
        records[0]["guid"],
        records[1]["guid"],
        records[2]["guid"],
    ])
pulumi.export("datasetGuid", golden.guid)
pulumi.export("datasetRecords", golden.data)
