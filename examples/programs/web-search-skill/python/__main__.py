import pulumi
import pulumi_gms as gms

web_search = gms.Skill("webSearch",
    name="web-search",
    type="web")
pulumi.export("skillGuid", web_search.guid)
