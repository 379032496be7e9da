import { createToken, Lexer, type TokenType } from "./chevrotain.js";

// Token vocabulary of the Spoolfile (docs/decisions.md D2).
// Whitespace is kept in its own group so the token stream stays lossless; comments and newlines
// are real tokens because statements end at a newline and comments attach to their line.

/** `{env.X}`, `{$X}`, `{$X:default}`, `{file.PATH}`, `{vars.X}`: may stand alone or inside a bare word. */
const placeholder = String.raw`\{(?:\$[A-Za-z_][A-Za-z0-9_]*(?::[^\s{}"#;]*)?|env\.[A-Za-z_][A-Za-z0-9_]*|vars\.[A-Za-z_][A-Za-z0-9_]*|file\.[^\s{}"#;]+)\}`;
const bareChar = String.raw`[^\s{}"#;]`;

export const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[^\S\r\n]+/, group: "whitespace" });
export const Newline = createToken({ name: "Newline", pattern: /\r\n|\r|\n/, line_breaks: true });
export const Comment = createToken({ name: "Comment", pattern: /#[^\r\n]*/ });
export const QuotedString = createToken({ name: "QuotedString", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"/ });
/** A string that reaches the end of its line without a closing quote: reported, then read as a string. */
export const UnterminatedString = createToken({ name: "UnterminatedString", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*\\?/ });
export const Word = createToken({ name: "Word", pattern: new RegExp(`(?:${placeholder}|${bareChar})+`) });
export const LCurly = createToken({ name: "LCurly", pattern: /\{/ });
export const RCurly = createToken({ name: "RCurly", pattern: /\}/ });
export const Semi = createToken({ name: "Semi", pattern: /;/ });

// Order matters: a placeholder-led word must win over a lone `{`.
export const allTokens: TokenType[] = [
  WhiteSpace,
  Newline,
  Comment,
  QuotedString,
  UnterminatedString,
  Word,
  LCurly,
  RCurly,
  Semi,
];

export const spoolLexer = new Lexer(allTokens, {
  positionTracking: "full",
  ensureOptimizations: false,
});
