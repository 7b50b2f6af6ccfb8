#!/usr/bin/env node
// The `gateway` executable as built (scripts/build-cli.mjs bundles it into dist/cli/main.js, the
// package's bin). `serve` logs stack traces, so it turns source maps on before anything else loads
// (Node 20 maps a module's frames only when they were on as it loaded, and every chunk but this one
// loads after this line): its log lines name src/ files. The other commands print one line per
// failure, never a stack, and reading the maps would cost an admin command ~20% of its CPU
// (decision 0034); NODE_OPTIONS=--enable-source-maps turns them on for any command.
if (process.argv[2] === "serve") process.setSourceMapsEnabled(true);
const { runFromCommandLine } = await import("./main.js");
runFromCommandLine();
