/** A region of a source file. Lines and columns are 1-based; offsets are 0-based UTF-16 indexes. */
export interface Span {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly offset: number;
  readonly endOffset: number;
}

export function formatSpan(span: Span): string {
  return `${span.file}:${span.line}:${span.col}`;
}
