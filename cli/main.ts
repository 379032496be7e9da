#!/usr/bin/env node
import { cac } from "cac";
import { spoolVersion } from "./version.js";

const cli = cac("spool");

cli.command("version", "Print the Spool version").action(() => {
  process.stdout.write(`${spoolVersion}\n`);
});

cli.help();
cli.parse();
