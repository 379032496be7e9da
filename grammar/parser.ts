import { EmbeddedActionsParser, type IToken } from "./chevrotain.js";
import { errorAt, type Diagnostic } from "./diagnostic.js";
import type { RestoredClose } from "./recovery.js";
import type { Span } from "./span.js";
import { allTokens, Comment, LCurly, Newline, QuotedString, RCurly, Semi, UnterminatedString, Word } from "./tokens.js";
import type { Arg, BlankLine, Block, CommentNode, Item } from "./tree.js";

// Grammar (statements end at a newline, `;`, or the `}` that closes their block):
//   file          := statementList(top) EOF
//   statementList := ( Newline | Semi | Comment | statement | <top-level stray "}"> )*
//   statement     := (Word | String) (Word | String)* block?  |  block   (the second form is an error)
//   block         := "{" statementList "}"
// The grammar is LL(1) and handles its own error cases (stray or missing braces, nameless blocks)
// as explicit alternatives, so every error is reported and parsing always reaches the end. A `}`
// lost in an indented file has been put back before parsing (recovery.ts): the block it closes is
// reported as unclosed, and the file after it parses as written.
// An EmbeddedActionsParser, not a CST parser plus visitor: the actions build the lossless tree in
// one pass, with no intermediate CST to allocate and walk.

type RawElement =
  | { readonly kind: "newline"; readonly token: IToken }
  | { readonly kind: "semi"; readonly token: IToken }
  | { readonly kind: "comment"; readonly token: IToken }
  | { readonly kind: "directive"; readonly directive: MutableDirective; readonly endLine: number };

interface MutableDirective {
  kind: "directive";
  name: Arg | null;
  args: Arg[];
  block: Block | null;
  trailingComment: CommentNode | null;
  span: Span;
}

/** The error of a block with no directive name before its `{` (compiler/index.ts recognises it). */
export const NAMELESS_BLOCK = 'expected a directive name before "{"';

export class SpoolfileParser extends EmbeddedActionsParser {
  file = "Spoolfile";
  diagnostics: Diagnostic[] = [];
  /** The `}` tokens put back by indentation recovery: each closes its block and is reported. */
  restoredCloses: ReadonlyMap<IToken, RestoredClose> = new Map();

  constructor() {
    super(allTokens, { recoveryEnabled: false, maxLookahead: 1 });
    this.performSelfAnalysis();
  }

  public fileRule = this.RULE("fileRule", (): Item[] => {
    const raw = this.SUBRULE(this.topStatementList);
    return this.ACTION(() => shapeItems(raw, null, this.file).items);
  });

  // Two list rules rather than one gated rule: MANY's lookahead ignores gates, so a gated `}`
  // alternative would swallow the brace that closes a block.
  private topStatementList = this.RULE("topStatementList", (): RawElement[] => {
    const raw: RawElement[] = [];
    this.MANY(() => {
      this.OR([
        { ALT: () => { const element = this.SUBRULE(this.listElement); this.ACTION(() => raw.push(element)); } },
        {
          ALT: () => {
            const token = this.CONSUME(RCurly);
            this.ACTION(() => this.diagnostics.push(errorAt(this.spanOf(token), 'unexpected "}": no block is open here', { code: "syntax_error", subject: "", expected: 'a directive; this "}" closes no block' })));
          },
        },
      ]);
    });
    return raw;
  });

  private statementList = this.RULE("statementList", (): RawElement[] => {
    const raw: RawElement[] = [];
    this.MANY(() => {
      const element = this.SUBRULE(this.listElement);
      this.ACTION(() => raw.push(element));
    });
    return raw;
  });

  private listElement = this.RULE("listElement", (): RawElement => {
    return this.OR([
      { ALT: () => ({ kind: "newline", token: this.CONSUME(Newline) }) as RawElement },
      { ALT: () => ({ kind: "semi", token: this.CONSUME(Semi) }) as RawElement },
      { ALT: () => ({ kind: "comment", token: this.CONSUME(Comment) }) as RawElement },
      { ALT: () => this.SUBRULE(this.statement) },
    ]);
  });

  private statement = this.RULE("statement", (): RawElement => {
    return this.OR([
      {
        ALT: () => {
          const name = this.SUBRULE(this.argument);
          const args: Arg[] = [];
          this.MANY(() => {
            const arg = this.SUBRULE2(this.argument);
            this.ACTION(() => args.push(arg));
          });
          const block = this.OPTION(() => this.SUBRULE(this.block));
          return this.ACTION(() => this.directiveElement(name, args, block ?? null));
        },
      },
      {
        ALT: () => {
          const block = this.SUBRULE2(this.block);
          return this.ACTION(() => {
            this.diagnostics.push(errorAt(block.block.open, NAMELESS_BLOCK, { code: "syntax_error", subject: "", expected: 'a directive name before "{"' }));
            return this.directiveElement(null, [], block);
          });
        },
      },
    ]);
  });

  private argument = this.RULE("argument", (): Arg => {
    const token = this.OR([
      { ALT: () => this.CONSUME(Word) },
      { ALT: () => this.CONSUME(QuotedString) },
      { ALT: () => this.CONSUME(UnterminatedString) },
    ]);
    return this.ACTION(() => {
      const span = this.spanOf(token);
      if (token.tokenType === Word) return { kind: "word", raw: token.image, value: token.image, span } as const;
      const closed = token.tokenType === QuotedString;
      if (!closed) this.diagnostics.push(errorAt(span, "unterminated string: expected a closing \" before the end of the line", { code: "unterminated_string", subject: "", expected: 'a closing " before the end of the line' }));
      const body = closed ? token.image.slice(1, -1) : token.image.slice(1);
      return { kind: "string", raw: token.image, value: unescapeString(body), span } as const;
    });
  });

  private block = this.RULE("block", (): { block: Block; endToken: IToken } => {
    const open = this.CONSUME(LCurly);
    const raw = this.SUBRULE(this.statementList);
    const close = this.OPTION(() => this.CONSUME(RCurly));
    return this.ACTION(() => {
      const openSpan = this.spanOf(open);
      const restored = close ? this.restoredCloses.get(close) : undefined;
      const unclosed = { code: "unclosed_block", subject: "" } as const;
      if (!close) this.diagnostics.push(errorAt(openSpan, 'unclosed block: expected "}" to close this "{" before the end of the file', { ...unclosed, expected: '"}" to close this "{" before the end of the file' }));
      if (restored) this.diagnostics.push(errorAt(openSpan, restoredCloseMessage(restored), { ...unclosed, expected: '"}" to close the block opened here, where the indentation shows it ended' }));
      const shaped = shapeItems(raw, open, this.file);
      // A restored `}` is zero-width, right after the block's last token: the block ends there.
      const lastToken = close ?? lastTokenOf(raw) ?? open;
      return {
        block: { open: openSpan, close: close && !restored ? this.spanOf(close) : null, openComment: shaped.openComment, items: shaped.items },
        endToken: lastToken,
      };
    });
  });

  private directiveElement(name: Arg | null, args: Arg[], parsedBlock: { block: Block; endToken: IToken } | null): RawElement {
    const start = name?.span ?? parsedBlock!.block.open;
    const lastArg = args.at(-1) ?? name;
    const endOffset = parsedBlock ? parsedBlock.endToken.endOffset! + 1 : lastArg!.span.endOffset;
    const endLine = parsedBlock ? parsedBlock.endToken.endLine ?? parsedBlock.endToken.startLine! : lastArg!.span.line;
    const directive: MutableDirective = {
      kind: "directive",
      name,
      args,
      block: parsedBlock?.block ?? null,
      trailingComment: null,
      span: { ...start, endOffset },
    };
    return { kind: "directive", directive, endLine };
  }

  spanOf(token: IToken): Span {
    return spanOfToken(token, this.file);
  }
}

export function spanOfToken(token: IToken, file: string): Span {
  return {
    file,
    line: token.startLine ?? 1,
    col: token.startColumn ?? 1,
    offset: token.startOffset,
    endOffset: (token.endOffset ?? token.startOffset) + 1,
  };
}

function restoredCloseMessage(restored: RestoredClose): string {
  const opened = restored.name === null ? 'this "{"' : `"${restored.name}" opened here`;
  return `unclosed block: ${opened} has no "}"; the next line at its indentation or less suggests it should have closed before line ${restored.nextLine}`;
}

function lastTokenOf(raw: readonly RawElement[]): IToken | undefined {
  for (let i = raw.length - 1; i >= 0; i--) {
    const element = raw[i];
    if (element.kind !== "directive") return element.token;
  }
  return undefined;
}

/** Decodes `\\ \" \n \t \r`; any other backslash is kept literally (Windows paths, regexes). */
export function unescapeString(body: string): string {
  return body.replace(/\\([\\"ntr])/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c === "r" ? "\r" : c));
}

/**
 * Turns a raw statement list into items: attaches end-of-line comments to the statement (or the
 * opening `{`) on their line, and records blank lines.
 */
function shapeItems(raw: readonly RawElement[], opener: IToken | null, file: string): { items: Item[]; openComment: CommentNode | null } {
  const items: Item[] = [];
  let openComment: CommentNode | null = null;
  let lastLine = opener ? opener.startLine! : 0;
  let lastOwner: MutableDirective | "open" | null = opener ? "open" : null;
  // Newlines seen since the previous element. Between two elements, k newlines leave k-1 empty
  // lines; before the first element of the file every newline is an empty line.
  const pendingNewlines: Span[] = [];
  let atFileStart = !opener;

  const flushBlanks = () => {
    const blankCount = atFileStart ? pendingNewlines.length : Math.max(0, pendingNewlines.length - 1);
    for (let i = pendingNewlines.length - blankCount; i < pendingNewlines.length; i++) {
      items.push({ kind: "blank", span: pendingNewlines[i] } satisfies BlankLine);
    }
    pendingNewlines.length = 0;
    atFileStart = false;
  };

  for (const element of raw) {
    switch (element.kind) {
      case "newline":
        pendingNewlines.push(spanOfToken(element.token, file));
        lastOwner = null;
        break;
      case "semi":
        lastLine = element.token.startLine!;
        break;
      case "comment": {
        const node: CommentNode = { kind: "comment", text: element.token.image.trimEnd(), span: spanOfToken(element.token, file) };
        if (lastOwner !== null && element.token.startLine === lastLine) {
          if (lastOwner === "open") openComment = node;
          else lastOwner.trailingComment = node;
        } else {
          flushBlanks();
          items.push(node);
        }
        lastOwner = null;
        break;
      }
      case "directive":
        flushBlanks();
        items.push(element.directive);
        lastOwner = element.directive;
        lastLine = element.endLine;
        break;
    }
  }
  return { items, openComment };
}
