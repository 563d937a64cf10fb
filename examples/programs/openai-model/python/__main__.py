import pulumi
import pulumi_gms as gms

config = pulumi.Config()
openai_key = config.require_secret("openaiKey")
openai = gms.ProviderConnection("openai",
    provider="openai",
    key=openai_key,
    nickname="OpenAI (production)",
    default=True)
gpt4o_mini = gms.Model("gpt4oMini",
    llm="gpt-4o-mini",
    provider="openai",
    key=openai_key,
    default=True,
    opts = pulumi.ResourceOptions(depends_on=[openai]))
pulumi.export("connectionGuid", openai.guid)
pulumi.export("modelGuid", gpt4o_mini.guid)
pulumi.export("modelConnection", gpt4o_mini.provider_guid)
