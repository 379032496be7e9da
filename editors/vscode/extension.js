// The Spoolfile extension's client: starts `spool lsp` and hands it every Spoolfile the editor opens.
// Highlighting is the TextMate grammar's (syntaxes/); everything else comes from the server.
"use strict";
const { window, workspace } = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

/** @type {LanguageClient | undefined} */
let client;

async function activate(context) {
  const config = workspace.getConfiguration("spoolfile");
  const command = config.get("server.path", "spool");
  const args = [...config.get("server.args", []), "lsp"];
  // TransportKind.stdio adds --stdio, which `spool lsp` accepts.
  const server = { command, args, transport: TransportKind.stdio };
  client = new LanguageClient("spoolfile", "Spoolfile", server, { documentSelector: [{ language: "spoolfile" }] });
  try {
    await client.start();
  } catch (error) {
    window.showErrorMessage(`Spoolfile: could not start "${command} ${args.join(" ")}" (set spoolfile.server.path): ${error.message}`);
  }
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
