import { dirname, isAbsolute, resolve } from "node:path";
import { errorAt, warningAt, type Arg, type Diagnostic, type DiagnosticCode, type Directive, type Span } from "../grammar/index.js";
import { MAX_SECRET_FILE_BYTES, readSecretFile, unreadableReason } from "./secret-file.js";

/** The optional parts of a diagnostic (grammar Problem): the value found, a did-you-mean, another subject. */
export interface ProblemExtra {
  readonly found?: string;
  readonly suggestion?: string;
  /** Instead of the directive path being compiled (cross-checks name the route they are about). */
  readonly subject?: string;
}

export interface CompileOptions {
  /** Environment for `env:` secrets and `{env.X}` / `{$X}` placeholders. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Reads `file:` secrets and `{file.X}` placeholders. Default: the file system, relative to the config's directory. */
  readonly readFile?: (path: string) => string;
  /** `spool run`: an unreadable secret is an error instead of a warning. */
  readonly strictSecrets?: boolean;
}

const PLACEHOLDER = /\{(?:\$([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?|env\.([A-Za-z_][A-Za-z0-9_]*)|vars\.([A-Za-z_][A-Za-z0-9_]*)|file\.([^}\s]+))\}/g;

/** The longest value placeholders may expand to (a 1 MiB secret file fits). */
const MAX_EXPANDED_CHARS = 2 * MAX_SECRET_FILE_BYTES;
/** How deep vars may refer to vars ({vars.A} in B, {vars.B} in C, …). */
const MAX_VAR_DEPTH = 100;

/** Collects diagnostics and resolves placeholders; handed to every block compiler. */
export class CompileContext {
  readonly diagnostics: Diagnostic[] = [];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly strictSecrets: boolean;
  private readonly readFileImpl: (path: string) => string;
  private readonly baseDir: string;
  /** Raw `vars` values by name, with their spans; resolved lazily so vars may reference vars. */
  private readonly rawVars = new Map<string, Arg>();
  private readonly resolvedVars = new Map<string, string>();
  private readonly resolvingVars = new Set<string>();
  /** Directives whose compilation reported an error (readDirectives): cross-checks skip what they caused. */
  private readonly failed = new Map<Directive, string>();
  private errorCount = 0;
  /** Secret IDs, var names and top-level blocks whose definition failed (`secret:ID`, `block:vars`): see markBroken. */
  private readonly broken = new Set<string>();
  /** Arguments with a placeholder that could not be expanded (reported where it failed). */
  private readonly unexpandable = new Set<Arg>();
  /** The directive path being compiled (subject). */
  private readonly scope: string[] = [];
  /** A too-deep chain of vars has been reported (resolveVar). */
  private reportedTooDeep = false;
  /**
   * Every value a placeholder expanded to, with the placeholder as written (`{vars.TOKEN}`,
   * `{env.X}`, `{$X}`, `{file.P}`): credentials may come through placeholders into URLs and
   * arguments, so `config diff --semantic` shows the placeholder instead (diff-masking.ts semanticChanges).
   */
  readonly expansions = new Map<string, string>();

  constructor(readonly file: string, options: CompileOptions = {}) {
    this.env = options.env ?? process.env;
    this.strictSecrets = options.strictSecrets ?? false;
    this.baseDir = dirname(resolve(file));
    this.readFileImpl = options.readFile ?? ((path) => readSecretFile(this.resolvePath(path)));
  }

  /**
   * The directive path being compiled, `route /github › deliver › timeout`: the subject of every
   * diagnostic reported inside `within`. Parts are the compiler's own names and route paths.
   */
  get subject(): string {
    return this.scope.join(" › ");
  }

  /** Runs `compile` for directive `d`, remembering whether it reported an error. */
  compiling(d: Directive, compile: () => void): void {
    const before = this.errorCount;
    compile();
    if (this.errorCount > before) this.failed.set(d, nameOf(d));
  }

  /** A misspelt directive failed as the directive it is nearest to: `pullx` as `pull`. */
  failedAs(d: Directive, name: string): void {
    this.failed.set(d, name);
  }

  /**
   * Whether a `name` statement in `owner`'s block failed to compile: then what depends on it (a
   * token, a secret, a matcher) is missing because of an error already reported, and a cross-check
   * saying it is missing would be a second report of the same mistake.
   */
  failedWithin(owner: Directive | null | undefined, ...names: string[]): boolean {
    return (owner?.block?.items ?? []).some((item) => item.kind === "directive" && names.includes(this.failed.get(item) ?? "\u0000"));
  }

  /**
   * A secret or var whose definition failed is still defined: a reference to it is not reported as
   * unknown, which would be a second report of the definition's error.
   */
  markBroken(kind: "secret" | "var" | "block", name: string): void {
    this.broken.add(`${kind}:${name}`);
  }

  isBroken(kind: "secret" | "var" | "block", name: string): boolean {
    return this.broken.has(`${kind}:${name}`);
  }

  /** Runs `compile` with `part` appended to the subject. */
  within<T>(part: string, compile: () => T): T {
    this.scope.push(part);
    try {
      return compile();
    } finally {
      this.scope.pop();
    }
  }

  /** Reports an error: `code` and `expected` (the compiler's words) are the part logs may show; `message` is the whole sentence. */
  error(span: Span, code: DiagnosticCode, expected: string, message: string, extra: ProblemExtra = {}): undefined {
    this.errorCount++;
    this.diagnostics.push(errorAt(span, message, { subject: this.subject, ...extra, code, expected }));
    return undefined;
  }

  warning(span: Span, code: DiagnosticCode, expected: string, message: string, extra: ProblemExtra = {}): void {
    this.diagnostics.push(warningAt(span, message, { subject: this.subject, ...extra, code, expected }));
  }

  /**
   * A secret that cannot be read: an error for `spool run`, a warning for `config validate` that
   * says `spool run` refuses it (one verdict: validate never calls good what run refuses).
   */
  secretProblem(span: Span, code: DiagnosticCode, expected: string, message: string): void {
    if (this.strictSecrets) {
      this.error(span, code, expected, message);
      return;
    }
    this.diagnostics.push(warningAt(span, `${message}; spool run refuses to start or reload with it`, { subject: this.subject, code, expected, refusedByRun: true }));
  }

  /** The absolute path a `file:` reference names. */
  resolvePath(path: string): string {
    return isAbsolute(path) ? path : resolve(this.baseDir, path);
  }

  /** The file's text, or why it could not be read (for the diagnostic: missing, too large, …). */
  readFile(path: string): { text: string } | { reason: string } {
    try {
      return { text: this.readFileImpl(path) };
    } catch (error) {
      return { reason: unreadableReason(error) };
    }
  }

  /**
   * Whether a placeholder of `arg` could not be expanded: its error (or its definition's) is
   * reported, and the value left is no value to judge again.
   */
  unexpanded(arg: Arg): boolean {
    return this.unexpandable.has(arg);
  }

  /** The directives named `name` (or misspelt as it) in `owner`'s block that failed to compile. */
  failedDirectives(owner: Directive, name: string): Directive[] {
    return (owner.block?.items ?? []).filter((item): item is Directive => item.kind === "directive" && this.failed.get(item) === name);
  }

  defineVar(name: Arg, value: Arg): void {
    this.rawVars.set(name.value, value);
  }

  /** The argument's value with every placeholder resolved. */
  text(arg: Arg): string {
    if (!arg.value.includes("{")) return arg.value;
    const expanded = this.expand(arg);
    // Vars that repeat vars grow geometrically (16 copies, 8 levels deep is 68 GB): refused at the
    // first value past the limit, with its position, instead of running out of memory.
    if (expanded.length > MAX_EXPANDED_CHARS) {
      this.unexpandable.add(arg);
      this.error(arg.span, "invalid_value", `a value of at most ${MAX_EXPANDED_CHARS} characters once its placeholders are expanded`, `the value is longer than ${MAX_EXPANDED_CHARS} characters once its placeholders are expanded`);
      return "";
    }
    return expanded;
  }

  private expand(arg: Arg): string {
    return arg.value.replace(PLACEHOLDER, (whole: string, dollarName?: string, dollarDefault?: string, envName?: string, varName?: string, filePath?: string) => {
      const value = this.expandOne(arg, whole, { dollarName, dollarDefault, envName, varName, filePath });
      if (value !== "" && !this.expansions.has(value)) this.expansions.set(value, whole);
      return value;
    });
  }

  private expandOne(
    arg: Arg,
    whole: string,
    { dollarName, dollarDefault, envName, varName, filePath }: { dollarName?: string; dollarDefault?: string; envName?: string; varName?: string; filePath?: string },
  ): string {
    if (dollarName !== undefined || envName !== undefined) {
      const name = (dollarName ?? envName)!;
      const value = this.env[name];
      // As in Caddyfiles, `{$X:default}` falls back when X is unset or empty.
      if (dollarDefault !== undefined && (value === undefined || value === "")) return dollarDefault;
      if (value !== undefined) return value;
      this.warning(arg.span, "env_unset", `environment variable ${name} to be set (${whole} is empty without it)`, `environment variable ${name} is not set; ${whole} is empty`);
      return "";
    }
    if (varName !== undefined) {
      const value = this.resolveVar(varName, arg.span);
      if (value === undefined) this.unexpandable.add(arg);
      return value ?? "";
    }
    const read = this.readFile(filePath!);
    if ("reason" in read) {
      this.unexpandable.add(arg);
      this.error(arg.span, "file_unreadable", `a readable file ${filePath} for ${whole} (${read.reason})`, `cannot read file "${filePath}" for ${whole}: ${read.reason}`);
      return "";
    }
    return read.text;
  }

  private resolveVar(name: string, span: Span): string | undefined {
    const known = this.resolvedVars.get(name);
    if (known !== undefined) return known;
    const raw = this.rawVars.get(name);
    if (!raw && (this.isBroken("var", name) || this.isBroken("block", "vars"))) return undefined;
    if (!raw) return this.error(span, "unknown_reference", "a variable defined in the vars block", `unknown variable {vars.${name}}: define it in the vars block`);
    if (this.resolvingVars.has(name)) {
      return this.error(raw.span, "invalid_value", "vars that do not refer back to themselves", `placeholder cycle: {vars.${name}} refers back to itself (through ${[...this.resolvingVars].join(" -> ")})`);
    }
    // Each level is a few stack frames deep: a chain some thousand vars long exhausted the stack and
    // failed with a RangeError and no position.
    // Reported once: resolving the rest of a long chain would hit the limit again every 100 vars.
    if (this.resolvingVars.size > MAX_VAR_DEPTH) {
      if (this.reportedTooDeep) return undefined;
      this.reportedTooDeep = true;
      return this.error(raw.span, "invalid_value", `vars nested at most ${MAX_VAR_DEPTH} levels deep`, `{vars.${name}} is nested too deep: a var may refer to vars that refer to vars at most ${MAX_VAR_DEPTH} levels down`);
    }
    this.resolvingVars.add(name);
    const value = this.text(raw);
    this.resolvingVars.delete(name);
    this.resolvedVars.set(name, value);
    return value;
  }

  /** Every defined var, resolved (for the IR). */
  allVars(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, arg] of this.rawVars) out[name] = this.resolveVar(name, arg.span) ?? "";
    return out;
  }
}

/**
 * A route's subject, `route /github`, by its path as written: only a path of the usual characters
 * (and placeholders by name) is shown, since a value misplaced at top level reads as a route.
 */
export function routeSubject(path: string): string {
  return /^\/[A-Za-z0-9._~\-/{}$]{0,120}$/.test(path) && !/\{\$[^}]*:/.test(path) ? `route ${path}` : "route (path not shown)";
}

/** The directive's name as written (`""` for a recovered nameless block). */
export function nameOf(d: Directive): string {
  return d.name?.value ?? "";
}

/** Where a directive's problem is reported: its name, or its block for a nameless one. */
export function spanOf(d: Directive): Span {
  return d.name?.span ?? d.span;
}
