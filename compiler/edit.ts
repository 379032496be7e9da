import { directivesOf, hasErrors, parseSpoolfile, type Diagnostic, type Directive } from "../grammar/index.js";
import { errorAt } from "../grammar/index.js";
import { compileTree, compileTreeWithSources } from "./compile.js";
import type { CompileOptions } from "./context.js";
import type { SpoolConfig } from "./ir.js";
import { cleanPath } from "./values.js";

// The management edit API (DECISIONS.md "Management PUT/DELETE"): set or remove a route's
// `application`/`endpoint_name` by splicing only those statements into the original text, so every
// other byte (comments, layout, quoting) survives. The result is recompiled and checked against the
// intent before it is returned.

export interface RouteLabels {
  readonly application: string;
  readonly endpointName: string;
}

export type EditResult = { readonly ok: true; readonly text: string; readonly config: SpoolConfig } | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

interface Splice {
  readonly start: number;
  readonly end: number;
  readonly insert: string;
}

export function setRouteLabels(text: string, file: string, routePath: string, labels: RouteLabels | null, options: CompileOptions = {}): EditResult {
  const { tree, diagnostics } = parseSpoolfile(text, file);
  if (hasErrors(diagnostics)) return { ok: false, diagnostics };
  // The statement the route was compiled from: its written path may hold placeholders.
  const route = compileTreeWithSources(tree, options).routeSources.get(cleanPath(routePath));
  const fileStart = { file, line: 1, col: 1, offset: 0, endOffset: 0 };
  if (!route?.block) return { ok: false, diagnostics: [errorAt(fileStart, `no route ${routePath} in ${file}`)] };
  const inner = directivesOf(route.block.items);
  const existing = {
    application: inner.find((d) => d.name?.value === "application"),
    endpoint_name: inner.find((d) => d.name?.value === "endpoint_name"),
  };
  const splices: Splice[] = [];
  if (labels) {
    const values = { application: quote(labels.application), endpoint_name: quote(labels.endpointName) };
    const missing: string[] = [];
    for (const key of ["application", "endpoint_name"] as const) {
      const d = existing[key];
      if (d && d.args.length > 0) splices.push({ start: d.args[0].span.offset, end: d.args.at(-1)!.span.endOffset, insert: values[key] });
      else if (d) splices.push({ start: d.name!.span.endOffset, end: d.name!.span.endOffset, insert: ` ${values[key]}` });
      else missing.push(`${key} ${values[key]}`);
    }
    if (missing.length > 0) splices.push(insertAtBlockStart(text, route, missing));
  } else {
    for (const d of [existing.application, existing.endpoint_name]) if (d) splices.push(removeStatement(text, d));
  }
  const edited = applySplices(text, splices);
  const compiled = compileTree(parseSpoolfile(edited, file).tree, options);
  if (!compiled.config) return { ok: false, diagnostics: compiled.diagnostics };
  const after = compiled.config.routes.find((r) => r.path === cleanPath(routePath));
  const intended = labels ? [labels.application, labels.endpointName] : [null, null];
  if (!after || after.application !== intended[0] || after.endpointName !== intended[1]) {
    return { ok: false, diagnostics: [errorAt(fileStart, `editing the labels of ${routePath} did not produce the intended mapping`)] };
  }
  return { ok: true, text: edited, config: compiled.config };
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** New statements go first in the block: on their own lines, or inline for a one-line block. */
function insertAtBlockStart(text: string, route: Directive, statements: string[]): Splice {
  const block = route.block!;
  const openEnd = block.open.endOffset;
  const first = directivesOf(block.items)[0];
  const openLineEnd = lineEnd(text, openEnd);
  if (first && first.span.offset < openLineEnd) {
    return { start: openEnd, end: openEnd, insert: ` ${statements.join("; ")};` };
  }
  const indent = first ? leadingWhitespace(text, first.span.offset) : leadingWhitespace(text, route.span.offset) + "  ";
  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  return { start: openLineEnd, end: openLineEnd, insert: statements.map((s) => `${newline}${indent}${s}`).join("") };
}

/** Removes a statement; its line goes too when nothing else (but a comment, which stays) is on it. */
function removeStatement(text: string, d: Directive): Splice {
  const start = d.span.offset;
  let end = d.span.endOffset;
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const onlyIndentBefore = /^[ \t]*$/.test(text.slice(lineStart, start));
  const rest = text.slice(end, lineEnd(text, end));
  const semicolon = /^[ \t]*;[ \t]*/.exec(rest);
  if (semicolon) end += semicolon[0].length;
  const after = text.slice(end, lineEnd(text, end));
  if (onlyIndentBefore && /^[ \t]*$/.test(after)) {
    const eol = lineEnd(text, end);
    const next = text.startsWith("\r\n", eol) ? eol + 2 : text.startsWith("\n", eol) ? eol + 1 : eol;
    return { start: lineStart, end: next, insert: "" };
  }
  if (onlyIndentBefore && d.trailingComment && after.trim().startsWith("#")) {
    // Keep the comment where the statement was.
    return { start, end: d.trailingComment.span.offset, insert: "" };
  }
  return { start, end, insert: "" };
}

function lineEnd(text: string, from: number): number {
  const i = text.slice(from).search(/\r?\n/);
  return i < 0 ? text.length : from + i;
}

function leadingWhitespace(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))![0];
}

function applySplices(text: string, splices: readonly Splice[]): string {
  let out = text;
  for (const s of [...splices].sort((a, b) => b.start - a.start)) out = out.slice(0, s.start) + s.insert + out.slice(s.end);
  return out;
}
