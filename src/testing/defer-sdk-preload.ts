/** `node --require` entry of the provider host: defers the SDK's closure serializer (see defer-sdk.ts). */
import { deferClosureSerializer } from "./defer-sdk";

const pulumiDir = process.env.PULUMI_GMS_SDK_DIR;
if (pulumiDir) deferClosureSerializer(pulumiDir);
