// Stored as `__provider` in every App's state: keep tiny and stable (see src/provider/shim.ts).
import { shim } from "../provider/shim";
export = shim("App");
