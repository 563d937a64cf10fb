import pulumi
import pulumi_gms as gms

helpdesk = gms.App("helpdesk",
    name="Helpdesk",
    description="Answers customer questions")
triage = gms.Workflow("triage",
    name="Triage",
    app=helpdesk.id)
pulumi.export("appGuid", helpdesk.guid)
pulumi.export("appSlug", helpdesk.slug)
pulumi.export("workflowSlug", triage.slug)
