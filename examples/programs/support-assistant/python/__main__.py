import pulumi
import pulumi_gms as gms

config = pulumi.Config()
openai_key = config.require_secret("openaiKey")
draft_reply = gms.get_action(app="Support",
    name="Draft reply")
concise_reply = gms.get_action(app="Support",
    name="Draft reply (concise)")
records = gms.get_data_records(app="Support",
    limit=3)
exact_match = gms.get_eval_type(name="Exact match")
handbook = gms.get_context(name="Handbook")
assistant = gms.App("assistant",
    name="Support assistant",
    description="Drafts replies for the support team")
escalation = gms.Workflow("escalation",
    name="Escalation",
    app=assistant.id)
openai = gms.ProviderConnection("openai",
    provider="openai",
    key=openai_key,
    nickname="OpenAI (support)",
    default=True)
reply_model = gms.Model("replyModel",
    llm="gpt-4o-mini",
    provider="openai",
    key=openai_key,
    opts = pulumi.ResourceOptions(depends_on=[openai]))
reviewed = gms.Dataset("reviewed",
    name="Reviewed replies",
    app=draft_reply.app,
    data=[
        records[0]["guid"],
        records[1]["guid"],
        records[2]["guid"],
    ])
reply_quality = gms.Eval("replyQuality",
    name="Reply quality",
    action=draft_reply.guid,
    dataset=reviewed.id,
    eval_types=[{
        "guid": exact_match.guid,
    }])
concise_replies = gms.Experiment("conciseReplies",
    name="Concise replies",
    app=draft_reply.app,
    primary_action=draft_reply.guid,
    secondary_action=concise_reply.guid)
handbook_source = gms.ContextSource("handbookSource",
    context=handbook.guid,
    file=pulumi.FileAsset("handbook.md"),
    process=True,
    wait_for_indexing=True)
pulumi.export("appSlug", assistant.slug)
pulumi.export("workflowSlug", escalation.slug)
pulumi.export("modelConnection", reply_model.provider_guid)
pulumi.export("evalDataType", reply_quality.data_type)
pulumi.export("experimentStatus", concise_replies.status)
pulumi.export("handbookStatus", handbook_source.indexing_status)
