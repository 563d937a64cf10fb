/** `node --require` entry of the provider host: defers the SDK modules it does not use (see defer-sdk.ts). */
import { deferSdkModules } from "./defer-sdk";

const pulumiDir = process.env.PULUMI_GMS_SDK_DIR;
if (pulumiDir) deferSdkModules(pulumiDir);
