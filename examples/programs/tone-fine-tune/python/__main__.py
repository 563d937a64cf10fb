import pulumi
import pulumi_gms as gms

config = pulumi.Config()
openai_key = config.require_secret("openaiKey")
draft_reply = gms.get_action(app="Support",
    name="Draft reply")
openai = gms.ProviderConnection("openai",
    provider="openai",
    key=openai_key,
    nickname="OpenAI (fine-tuning)",
    default=True)
base_model = gms.Model("baseModel",
    llm="gpt-4o-mini",
    provider="openai",
    key=openai_key,
    opts = pulumi.ResourceOptions(depends_on=[openai]))
training_set = gms.Dataset("trainingSet",
    name="Support tone",
    description="Replies in the house tone",
    app=draft_reply.app)
support_tone = gms.FineTune("supportTone",
    name="Support tone",
    app=draft_reply.app,
    dataset=training_set.id,
    data_ids=[
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
    ],
    base_model="gpt-4o-mini",
    provider_connection=base_model.workspace_model_provider_id,
    wait_timeout_seconds=float(600))
pulumi.export("fineTuneGuid", support_tone.guid)
pulumi.export("fineTuneStatus", support_tone.status)
pulumi.export("vendorFinetuneName", support_tone.vendor_finetune_name)
