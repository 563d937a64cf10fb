import pulumi
import pulumi_gms as gms

draft_reply = gms.get_action(app="Support",
    name="Draft reply")
concise_reply = gms.get_action(app="Support",
    name="Draft reply (concise)")
concise_replies = gms.Experiment("conciseReplies",
    name="Concise replies",
    app=draft_reply.app,
    primary_action=draft_reply.guid,
    secondary_action=concise_reply.guid)
pulumi.export("experimentGuid", concise_replies.guid)
pulumi.export("experimentStatus", concise_replies.status)
