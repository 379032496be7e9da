// What `config diff --semantic` calls each IR field: the Spoolfile directive that sets it, and how
// its value is written there. One table for the whole IR (read off compiler/blocks/*.ts), so a
// change is named as the operator wrote it (`pull_api › max_batch`), never by its IR field.

/** How a value is printed (diff-values.ts formatValue). */
export type ValueKind =
  | "duration" // 5s, 1m30s, off
  | "size" // 64kb, 2mb
  | "bool" // on, off
  | "number"
  | "word" // an unquoted keyword: reject, github, sqlite
  | "text" // a quoted string
  | "listen" // :8080
  | "words" // a list of words: method POST PUT
  | "strings" // a list of quoted strings
  | "output" // stderr, file "/var/log/x"
  | "secret" // a secret source, never its value
  | "user" // auth basic "user" (redacted)
  | "timestamp" // "2026-01-01T00:00:00.000Z"
  | "named" // header/query/env pairs: names shown, values redacted
  | "hidden"; // a vars value, exec arguments: never shown

/** A directive (or a directive's part) and how its value is written; `name` "" is its block's own line. */
export interface LeafNode {
  readonly name: string;
  readonly kind: ValueKind;
}
/** A block whose fields are compared one by one; `name` "" adds no path segment. */
export interface BlockNode {
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldNode>>;
}
/** A list compared by position, each entry named `name #1`, `name #2`… */
export interface ListNode {
  readonly name: string;
  readonly each: LeafNode | BlockNode;
}
/** Named things (routes' targets, matchers, secrets, vars) compared by name; `label` prints the name. */
export interface KeyedNode {
  readonly label: (key: string) => string;
  /** For a list: the name of an entry. A record is keyed by its keys. */
  readonly keyOf?: (entry: Record<string, unknown>) => string;
  readonly each: LeafNode | BlockNode;
}
/** An IR field with nothing of its own to show: a named thing's identity, already in its path. */
export interface SkipNode {
  readonly skip: true;
}
export type FieldNode = LeafNode | BlockNode | ListNode | KeyedNode | SkipNode;

const leaf = (name: string, kind: ValueKind): LeafNode => ({ name, kind });
const block = (name: string, fields: Record<string, FieldNode>): BlockNode => ({ name, fields });
const SKIP: SkipNode = { skip: true };

const TLS = block("tls", { certFile: leaf("cert_file", "text"), keyFile: leaf("key_file", "text"), clientCaFile: leaf("client_ca", "text"), clientAuth: leaf("client_auth", "word") });
const RATE_LIMIT = block("rate_limit", { rps: leaf("rps", "number"), burst: leaf("burst", "number") });
const RETRY = block("retry", { maxRetries: leaf("max", "number"), baseMs: leaf("base", "duration"), capMs: leaf("cap", "duration"), jitter: leaf("jitter", "number") });
const TOKENS: ListNode = { name: "auth token", each: leaf("", "secret") };
/** A secret of `auth hmac` or `sign`: written in place (`secret_ref` not set) or named by `secret_ref`. */
const ROTATING_SECRET = block("", {
  id: leaf("secret_ref", "text"),
  source: leaf("value", "secret"),
  validFromMs: leaf("valid_from", "timestamp"),
  validUntilMs: leaf("valid_until", "timestamp"),
});
const LOG_FIELDS = { output: leaf("output", "output"), format: leaf("format", "word") };

const MATCH_FIELDS = {
  methods: leaf("method", "words"),
  hosts: leaf("host", "words"),
  headers: leaf("header", "named"),
  headersExist: leaf("header_exists", "words"),
  query: leaf("query", "named"),
  queryExist: leaf("query_exists", "words"),
  remoteIps: leaf("remote_ip", "words"),
};

/** `route.auth`: every kind's fields, each under the `auth …` form that sets it. */
const AUTH = block("", {
  kind: leaf("auth", "word"),
  tokens: TOKENS,
  users: { name: "auth basic", each: leaf("", "user") },
  secrets: { name: "auth hmac › secret", each: ROTATING_SECRET },
  runtimePools: leaf("auth hmac › secret_ref", "strings"),
  signatureHeader: leaf("auth hmac › signature_header", "text"),
  timestampHeader: leaf("auth hmac › timestamp_header", "text"),
  nonceHeader: leaf("auth hmac › nonce_header", "text"),
  toleranceMs: leaf("auth hmac › tolerance", "duration"),
  provider: leaf("auth hmac › provider", "word"),
  url: leaf("auth forward", "text"),
  timeoutMs: leaf("auth forward › timeout", "duration"),
  copyHeaders: leaf("auth forward › copy_headers", "strings"),
  bodyLimitBytes: leaf("auth forward › body_limit", "size"),
});

const SIGN = block("sign", {
  mode: leaf("", "word"),
  secrets: { name: "secret", each: ROTATING_SECRET },
  selection: leaf("secret_selection", "word"),
  signatureHeader: leaf("signature_header", "text"),
  timestampHeader: leaf("timestamp_header", "text"),
});

/** A deliver target, by its name: `deliver https://…` or `deliver exec /path`. */
const TARGET = block("", {
  kind: SKIP, // follows from the name: exec targets are named exec:…
  target: SKIP,
  url: SKIP,
  written: SKIP, // follows from the URL as written; the URL's own changes are the name's
  program: SKIP,
  args: leaf("arguments", "hidden"), // exec arguments may carry credentials (docs/cli.md)
  timeoutMs: leaf("timeout", "duration"),
  retry: RETRY,
  headers: leaf("header", "named"),
  env: leaf("env", "named"),
  sign: SIGN,
});

export function targetLabel(target: string): string {
  return target.startsWith("exec:") ? `deliver exec ${target.slice("exec:".length)}` : `deliver ${target}`;
}

export const ROUTE = block("", {
  path: SKIP,
  channel: leaf("channel", "word"),
  application: leaf("application", "text"),
  endpointName: leaf("endpoint_name", "text"),
  match: block("match", MATCH_FIELDS),
  rateLimit: RATE_LIMIT,
  auth: AUTH,
  maxBodyBytes: leaf("max_body", "size"),
  maxHeadersBytes: leaf("max_headers", "size"),
  publish: block("publish", { enabled: leaf("enabled", "bool"), direct: leaf("direct", "bool"), managed: leaf("managed", "bool") }),
  backend: leaf("queue", "word"),
  mode: block("", {
    kind: leaf("pull or deliver", "word"),
    path: leaf("pull › path", "text"),
    tokens: { name: "pull › auth token", each: leaf("", "secret") },
    targets: { label: targetLabel, keyOf: (t) => String(t.target), each: TARGET },
    concurrency: leaf("deliver_concurrency", "number"),
  }),
});

const TRACING = block("tracing", {
  enabled: leaf("enabled", "bool"),
  collector: leaf("collector", "text"),
  urlPath: leaf("url_path", "text"),
  timeoutMs: leaf("timeout", "duration"),
  compression: leaf("compression", "word"),
  insecure: leaf("insecure", "bool"),
  proxyUrl: leaf("proxy_url", "text"),
  tls: block("tls", {
    caFile: leaf("ca_file", "text"),
    certFile: leaf("cert_file", "text"),
    keyFile: leaf("key_file", "text"),
    serverName: leaf("server_name", "text"),
    insecureSkipVerify: leaf("insecure_skip_verify", "bool"),
  }),
  retry: block("retry", {
    enabled: leaf("enabled", "bool"),
    initialIntervalMs: leaf("initial_interval", "duration"),
    maxIntervalMs: leaf("max_interval", "duration"),
    maxElapsedTimeMs: leaf("max_elapsed_time", "duration"),
  }),
  headers: leaf("header", "named"),
});

const DEFAULTS_BLOCK = block("defaults", {
  maxBodyBytes: leaf("max_body", "size"),
  maxHeadersBytes: leaf("max_headers", "size"),
  deliver: block("deliver", {
    retry: RETRY,
    timeoutMs: leaf("timeout", "duration"),
    concurrency: leaf("concurrency", "number"),
    // Fixed by docs/delivery.md, not written in a Spoolfile: two configs never differ in them.
    minLeaseTtlMs: SKIP,
    leaseSlackMs: SKIP,
  }),
  egress: block("egress", {
    allow: leaf("allow", "words"),
    deny: leaf("deny", "words"),
    httpsOnly: leaf("https_only", "bool"),
    redirects: leaf("redirects", "bool"),
    dnsRebindProtection: leaf("dns_rebind_protection", "bool"),
  }),
  publishPolicy: block("publish_policy", {
    direct: leaf("direct", "bool"),
    managed: leaf("managed", "bool"),
    allowPullRoutes: leaf("allow_pull_routes", "bool"),
    allowDeliverRoutes: leaf("allow_deliver_routes", "bool"),
    requireActor: leaf("require_actor", "bool"),
    requireRequestId: leaf("require_request_id", "bool"),
    failClosed: leaf("fail_closed", "bool"),
    actorAllow: leaf("actor_allow", "strings"),
    actorPrefix: leaf("actor_prefix", "strings"),
  }),
  adaptiveBackpressure: block("adaptive_backpressure", {
    enabled: leaf("enabled", "bool"),
    minTotal: leaf("min_total", "number"),
    queuedPercent: leaf("queued_percent", "number"),
    readyLagMs: leaf("ready_lag", "duration"),
    oldestQueuedAgeMs: leaf("oldest_queued_age", "duration"),
    sustainedGrowth: leaf("sustained_growth", "bool"),
  }),
  trendSignals: block("trend_signals", {
    windowMs: leaf("window", "duration"),
    expectedCaptureIntervalMs: leaf("expected_capture_interval", "duration"),
    staleGraceFactor: leaf("stale_grace_factor", "number"),
    sustainedGrowthConsecutive: leaf("sustained_growth_consecutive", "number"),
    sustainedGrowthMinSamples: leaf("sustained_growth_min_samples", "number"),
    sustainedGrowthMinDelta: leaf("sustained_growth_min_delta", "number"),
    recentSurgeMinTotal: leaf("recent_surge_min_total", "number"),
    recentSurgeMinDelta: leaf("recent_surge_min_delta", "number"),
    recentSurgePercent: leaf("recent_surge_percent", "number"),
    deadShareHighMinTotal: leaf("dead_share_high_min_total", "number"),
    deadShareHighPercent: leaf("dead_share_high_percent", "number"),
    queuedPressureMinTotal: leaf("queued_pressure_min_total", "number"),
    queuedPressurePercent: leaf("queued_pressure_percent", "number"),
    queuedPressureLeasedMultiplier: leaf("queued_pressure_leased_multiplier", "number"),
  }),
});

/** Everything but `routes`, which diffConfigs compares by path and in order, each as ROUTE. */
export const CONFIG = block("", {
  ingress: block("ingress", { listen: leaf("listen", "listen"), tls: TLS, rateLimit: RATE_LIMIT }),
  pullApi: block("pull_api", {
    listen: leaf("listen", "listen"),
    prefix: leaf("prefix", "text"),
    tokens: TOKENS,
    maxBatch: leaf("max_batch", "number"),
    maxLeaseBatch: leaf("max_lease_batch", "number"),
    grpcListen: leaf("grpc_listen", "listen"),
    defaultLeaseTtlMs: leaf("default_lease_ttl", "duration"),
    maxLeaseTtlMs: leaf("max_lease_ttl", "duration"),
    defaultMaxWaitMs: leaf("default_max_wait", "duration"),
    maxWaitMs: leaf("max_wait", "duration"),
    sseKeepaliveMs: leaf("sse_keepalive", "duration"),
    sseMaxConnectionMs: leaf("sse_max_connection", "duration"),
    rateLimit: RATE_LIMIT,
    tls: TLS,
  }),
  adminApi: block("admin_api", { listen: leaf("listen", "listen"), prefix: leaf("prefix", "text"), tokens: TOKENS, tls: TLS }),
  observability: block("observability", {
    accessLog: block("access_log", { enabled: leaf("enabled", "bool"), ...LOG_FIELDS }),
    runtimeLog: block("runtime_log", { level: leaf("level", "word"), ...LOG_FIELDS }),
    metrics: block("metrics", { enabled: leaf("enabled", "bool"), listen: leaf("listen", "listen"), prefix: leaf("prefix", "text") }),
    tracing: TRACING,
  }),
  queueLimits: block("queue_limits", { maxDepth: leaf("max_depth", "number"), dropPolicy: leaf("drop_policy", "word") }),
  retention: block("", {
    queue: block("queue_retention", { maxAgeMs: leaf("max_age", "duration"), pruneIntervalMs: leaf("prune_interval", "duration") }),
    delivered: block("delivered_retention", { maxAgeMs: leaf("max_age", "duration") }),
    dlq: block("dlq_retention", { maxAgeMs: leaf("max_age", "duration"), maxDepth: leaf("max_depth", "number") }),
    attempts: block("attempts_retention", { maxAgeMs: leaf("max_age", "duration"), maxRows: leaf("max_rows", "number") }),
  }),
  defaults: DEFAULTS_BLOCK,
  vars: { label: (name) => `vars › ${name}`, each: leaf("", "hidden") },
  secrets: {
    label: (id) => `secrets › secret ${JSON.stringify(id)}`,
    keyOf: (s) => String(s.id),
    each: block("", { id: SKIP, source: leaf("value", "secret"), validFromMs: leaf("valid_from", "timestamp"), validUntilMs: leaf("valid_until", "timestamp"), runtime: leaf("runtime", "bool"), maxVersions: leaf("max_versions", "number") }),
  },
  matchers: { label: (name) => `@${name}`, each: block("", MATCH_FIELDS) },
  routes: SKIP,
  // The instance's one backend: the `queue` its routes name (each route's shows with it).
  backend: leaf("queue backend", "word"),
});
