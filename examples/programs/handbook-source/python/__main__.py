import pulumi
import pulumi_gms as gms

handbook = gms.get_context(name="Handbook")
handbook_source = gms.ContextSource("handbookSource",
    context=handbook.guid,
    file=pulumi.FileAsset("handbook.md"),
    splitter_config={
        "chunk_size": 400,
        "chunk_overlap": 40,
    },
    process=True,
    wait_for_indexing=True)
pulumi.export("sourceGuid", handbook_source.guid)
pulumi.export("indexingStatus", handbook_source.indexing_status)
pulumi.export("indexingMetadata", handbook_source.indexing_metadata)
