// Stored as `__provider` in every FineTune's state: keep tiny and stable (see src/provider/shim.ts).
import { shim } from "../provider/shim";

const provider = shim("FineTune");
export const { configure, check, diff, create, read, update } = provider;
const remove = provider.delete;
export { remove as delete };
