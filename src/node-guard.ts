/**
 * Imported first by each module entry of the package (package.json's `exports`: the resources, `/native`, `/provider`,
 * `/emulator`, `/locks`, `/testing`): loading one on a Node.js older than the package needs throws the one line of
 * nodeRefusal, instead of what would break later (`node:sqlite` missing, undici failing at the first request).
 */
import { requireSupportedNode } from "./node-version";

requireSupportedNode("pulumi-gms");
