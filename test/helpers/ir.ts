// IR for tests that need a config shape no Spoolfile is asked to produce. The base is what the
// compiler makes of an empty Spoolfile, so every default comes from compiler/defaults.ts and a test
// builder can never drift from it.
import { compileSpoolfile, DEFAULTS, type Route, type RouteMode, type SpoolConfig } from "../../compiler/index.js";

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// A block that sets nothing: the config of defaults only (an empty file is an error).
const compiledDefaults = compileSpoolfile("defaults { }\n", "defaults.spool", { env: {} }).config!;

/** A fresh, mutable copy of the all-defaults config. */
export function defaultConfig(): Mutable<SpoolConfig> {
  return structuredClone(compiledDefaults) as Mutable<SpoolConfig>;
}

/** An inbound route with the defaults a route gets when it overrides nothing. */
export function irRoute(path: string, mode: RouteMode, overrides: Partial<Route> = {}): Route {
  return {
    path,
    channel: "inbound",
    application: null,
    endpointName: null,
    match: null,
    rateLimit: null,
    auth: { kind: "none" },
    maxBodyBytes: DEFAULTS.maxBodyBytes,
    maxHeadersBytes: DEFAULTS.maxHeadersBytes,
    publish: { enabled: true, direct: true, managed: true },
    backend: "sqlite",
    mode,
    ...overrides,
  };
}
