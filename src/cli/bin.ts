#!/usr/bin/env node
// The `gateway` executable as built (scripts/build-cli.mjs bundles it into dist/cli/main.js, the
// package's bin). Source maps go on before anything else loads: Node 20 maps the stack frames of a
// module only when they were on as it loaded, and every chunk but this one loads after this line.
process.setSourceMapsEnabled(true);
const { runFromCommandLine } = await import("./main.js");
runFromCommandLine();
