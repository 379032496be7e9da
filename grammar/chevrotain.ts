// Chevrotain, loaded from its single-file build (docs/decisions.md D141). The package's entry
// (lib/src/api.js) imports lodash-es as some 640 separate modules, which takes about 200 ms before
// the first line of a Spoolfile is read; the package also ships lib/chevrotain.mjs, the same code
// as one file (about 10 ms). The entry is resolved the ordinary way and the bundle found beside it;
// when a layout lacks it, the entry is used. Every grammar file takes chevrotain from here, so the
// lexer's token types and the parser come from one copy.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

type Chevrotain = typeof import("chevrotain");

async function loadChevrotain(): Promise<Chevrotain> {
  try {
    const entry = createRequire(import.meta.url).resolve("chevrotain");
    const bundle = join(dirname(entry), "..", "chevrotain.mjs");
    if (existsSync(bundle)) return (await import(pathToFileURL(bundle).href)) as Chevrotain;
  } catch {
    // fall through to the package entry
  }
  return import("chevrotain");
}

const chevrotain = await loadChevrotain();

export const { createToken, createTokenInstance, EmbeddedActionsParser, Lexer } = chevrotain;
export type { IToken, TokenType } from "chevrotain";
