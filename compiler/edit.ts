import { directivesOf, hasErrors, parseSpoolfile, type Diagnostic, type Directive } from "../grammar/index.js";
import { errorAt } from "../grammar/index.js";
import { compileTree, compileTreeWithSources } from "./compile.js";
import type { CompileOptions } from "./context.js";
import type { SpoolConfig } from "./ir.js";
import { cleanPath } from "./values.js";

// The management edit API (docs/decisions.md D5): set or remove a route's
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
  if (!route?.block) return { ok: false, diagnostics: [errorAt(fileStart, `no route ${routePath} in ${file}`, { code: "unknown_reference", subject: "", expected: "a route of the file" })] };
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
    splices.push(...removeStatements(text, [existing.application, existing.endpoint_name].filter((d) => d !== undefined)));
  }
  const edited = applySplices(text, splices);
  const compiled = compileTree(parseSpoolfile(edited, file).tree, options);
  if (!compiled.config) return { ok: false, diagnostics: compiled.diagnostics };
  const after = compiled.config.routes.find((r) => r.path === cleanPath(routePath));
  const intended = labels ? [labels.application, labels.endpointName] : [null, null];
  if (!after || after.application !== intended[0] || after.endpointName !== intended[1]) {
    return { ok: false, diagnostics: [errorAt(fileStart, `editing the labels of ${routePath} did not produce the intended mapping`, { code: "invalid_value", subject: "", expected: "an edit that produces the intended mapping" })] };
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

/**
 * Removes statements, each with the `;` that follows it. Statements next to each other (the two
 * labels on one line) go as one stretch, so what is left of their line is judged once: the line goes
 * when nothing else is on it; a trailing comment stays where the statements were; a `;` left at the
 * end of the line by the last statement's removal goes too.
 */
function removeStatements(text: string, directives: readonly Directive[]): Splice[] {
  const stretches: { start: number; end: number }[] = [];
  for (const d of [...directives].sort((a, b) => a.span.offset - b.span.offset)) {
    const start = d.span.offset;
    const semicolon = /^[ \t]*;[ \t]*/.exec(text.slice(d.span.endOffset, lineEnd(text, d.span.endOffset)));
    const end = d.span.endOffset + (semicolon ? semicolon[0].length : 0);
    const last = stretches.at(-1);
    if (last && /^[ \t]*$/.test(text.slice(last.end, start))) last.end = end;
    else stretches.push({ start, end });
  }
  return stretches.map(({ start, end }) => lineAfterRemoving(text, start, end));
}

function lineAfterRemoving(text: string, start: number, end: number): Splice {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const before = text.slice(lineStart, start);
  const after = text.slice(end, lineEnd(text, end));
  if (/^[ \t]*$/.test(before) && /^[ \t]*$/.test(after)) {
    const eol = lineEnd(text, end);
    const next = text.startsWith("\r\n", eol) ? eol + 2 : text.startsWith("\n", eol) ? eol + 1 : eol;
    return { start: lineStart, end: next, insert: "" };
  }
  const comment = /^[ \t]*#/.exec(after);
  // Keep the comment where the statements were.
  if (/^[ \t]*$/.test(before) && comment) return { start, end: end + comment[0].length - 1, insert: "" };
  // `a; b` with b, the last statement of its line or block, removed: the `;` before b goes too.
  const separator = /[ \t]*;?[ \t]*$/.exec(before)!;
  if (/^[ \t]*$/.test(after)) return { start: start - separator[0].length, end: end + after.length, insert: "" };
  if (/^[ \t]*[#}]/.test(after)) return { start: start - separator[0].length, end, insert: /^[ \t]/.test(after) ? "" : " " };
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
