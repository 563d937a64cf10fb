// The plugin from source (PulumiPlugin.yaml): the Node.js language host's run-plugin requires this directory.
require("../dist/plugin/main.js")
  .servePlugin()
  .catch((error) => {
    process.stderr.write(`pulumi-resource-gms: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
