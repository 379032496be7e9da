// The directive reference: one row for every directive the compiler accepts, in every block
// (docs/decisions.md D142). Editors read it (hover, completion: lsp/) and it generates the
// "Directive reference" section of docs/spoolfile.md, so the docs and the editor say the same thing;
// test/lsp/reference.test.ts checks the rows against what the compiler really accepts and the docs
// against the generated text. Defaults are written as a Spoolfile would write them.

/** A block a directive may open; directives inside it are the rows whose `block` is its key. */
export interface BlockInfo {
  readonly key: string;
  /** How the block is written, for the docs heading. */
  readonly title: string;
  readonly about: string;
}

export interface DirectiveInfo {
  /** The key of the block the directive is written in ("top" for the top level). */
  readonly block: string;
  readonly name: string;
  /** A fixed first argument that makes it a different directive (`auth hmac`, `deliver exec`). */
  readonly sub?: string;
  /** How it is written, after the name (and `sub`). */
  readonly usage: string;
  readonly default: string;
  readonly description: string;
  /** The values its first argument (after `sub`) takes, when they are a closed set. */
  readonly values?: readonly string[];
  readonly repeatable?: boolean;
  /** The key of the block `{ … }` it opens. */
  readonly opens?: string;
  /** Arguments that make it valid when written to open its block (used to probe the compiler). */
  readonly probeArgs?: string;
}

const ON_OFF = ["on", "off"] as const;
export const LOG_LEVELS = ["debug", "info", "warn", "error", "off"] as const;
export const DROP_POLICIES = ["reject", "drop_oldest"] as const;
export const QUEUE_BACKENDS = ["sqlite", "memory", "postgres"] as const;
export const HMAC_PROVIDERS = ["github", "gitea", "forgejo", "stripe", "cituro", "standard_webhooks"] as const;
export const CLIENT_AUTH_MODES = ["none", "request", "require_any", "verify_if_given", "require", "require_and_verify"] as const;

export const BLOCKS: readonly BlockInfo[] = [
  { key: "top", title: "Top level", about: "Blocks written at the top of the file, besides routes (`/path { … }`) and named matchers (`@name { … }`)." },
  { key: "ingress", title: "`ingress { … }`", about: "The webhook listener." },
  { key: "pull_api", title: "`pull_api { … }`", about: "The Pull API listener and its limits." },
  { key: "admin_api", title: "`admin_api { … }`", about: "The Admin API listener." },
  { key: "tls", title: "`tls { … }` (in `ingress`, `pull_api`, `admin_api`)", about: "Serve HTTPS only; in `pull_api` it also secures the gRPC worker service (`grpc_listen`)." },
  { key: "rate_limit", title: "`rate_limit { … }` (in `ingress`, `pull_api`, a route)", about: "A token bucket." },
  { key: "observability", title: "`observability { … }`", about: "Access log, runtime log, metrics, tracing." },
  { key: "access_log", title: "`access_log { … }`", about: "One JSON line per request." },
  { key: "runtime_log", title: "`runtime_log { … }`", about: "The runtime's own log." },
  { key: "metrics", title: "`metrics { … }`", about: "The Prometheus endpoint." },
  { key: "tracing", title: "`tracing { … }`", about: "OpenTelemetry spans exported over OTLP/HTTP; a change to the block needs a restart." },
  { key: "tracing_tls", title: "`tracing { tls { … } }`", about: "TLS to the collector." },
  { key: "tracing_retry", title: "`tracing { retry { … } }`", about: "Retries of the exporter." },
  { key: "queue_limits", title: "`queue_limits { … }`", about: "Queue depth and what happens when it is reached." },
  { key: "queue_retention", title: "`queue_retention { … }`", about: "How long queued messages are kept." },
  { key: "delivered_retention", title: "`delivered_retention { … }`", about: "Whether and how long delivered messages are kept." },
  { key: "dlq_retention", title: "`dlq_retention { … }`", about: "Dead letters kept." },
  { key: "attempts_retention", title: "`attempts_retention { … }`", about: "Attempt records kept." },
  { key: "defaults", title: "`defaults { … }`", about: "Defaults for routes and delivery; egress, publish, backpressure, trend signals." },
  { key: "defaults_deliver", title: "`defaults { deliver { … } }`", about: "Push and exec defaults." },
  { key: "egress", title: "`defaults { egress { … } }`", about: "Where push may connect." },
  { key: "publish_policy", title: "`defaults { publish_policy { … } }`", about: "Rules for Admin API publish." },
  { key: "adaptive_backpressure", title: "`defaults { adaptive_backpressure { … } }`", about: "Refuse ingress while the queue is unhealthy." },
  { key: "trend_signals", title: "`defaults { trend_signals { … } }`", about: "Thresholds of the backlog trend signals." },
  { key: "secrets", title: "`secrets { … }`", about: "Named, rotating secrets for `secret_ref \"ID\"`." },
  { key: "secret", title: "`secret \"ID\" { … }`", about: "One named secret." },
  { key: "matcher", title: "`@name { … }` and `match { … }`", about: "Request criteria that all must hold (each repeatable)." },
  { key: "route", title: "`/path { … }` (a route)", about: "A route; inbound unless a channel is written before the path." },
  { key: "auth_hmac", title: "`auth hmac { … }`", about: "Signature check of incoming webhooks." },
  { key: "auth_forward", title: "`auth forward \"<url>\" { … }`", about: "Ask another service whether to admit a request." },
  { key: "publish", title: "`publish { … }`", about: "Admin API publish to this route." },
  { key: "queue", title: "`queue { … }`", about: "The route's queue backend." },
  { key: "pull", title: "`pull { … }`", about: "Workers pull the route." },
  { key: "deliver", title: "`deliver \"<url>\" { … }`", about: "Push to a URL." },
  { key: "deliver_exec", title: "`deliver exec \"<program>\" { … }`", about: "Run a program per message." },
];

type Row = Omit<DirectiveInfo, "block">;

function rows(block: string, list: readonly Row[]): DirectiveInfo[] {
  return list.map((row) => ({ block, ...row }));
}

const TLS_OPEN = { usage: "{ … }", default: "none", description: "Serve HTTPS only, with these files", opens: "tls" } as const;
const RATE_LIMIT_OPEN = { usage: "{ rps F; burst N }", opens: "rate_limit" } as const;
const BOOL = (name: string, dflt: string, description: string): Row => ({ name, usage: "on|off", default: dflt, description, values: ON_OFF });
const DURATION = (name: string, dflt: string, description: string): Row => ({ name, usage: "<duration>", default: dflt, description });
const NUMBER = (name: string, dflt: string, description: string): Row => ({ name, usage: "<number>", default: dflt, description });
const AUTH_TOKEN: Row = { name: "auth", sub: "token", usage: "<source>", default: "none", description: "A bearer token (`env:NAME`, `file:PATH` or `raw:VALUE`)", repeatable: true };
const LOG_OUTPUT: readonly Row[] = [
  { name: "output", usage: "stdout|stderr|file", default: "stderr", description: "Where the lines go", values: ["stdout", "stderr", "file"] },
  { name: "path", usage: "<path>", default: "none", description: "The log file when output is file (created, appended to)" },
  { name: "format", usage: "json", default: "json", description: "The line format (json only)", values: ["json"] },
];
const MATCHER: readonly Row[] = [
  { name: "method", usage: "M…", default: "POST only", description: "Request method", repeatable: true },
  { name: "host", usage: "<host>", default: "any", description: "Exact host, `*`, or `*.domain`", repeatable: true },
  { name: "header", usage: "\"Name\" \"value\"", default: "none", description: "A header with this value", repeatable: true },
  { name: "header_exists", usage: "<name>", default: "none", description: "A header is present", repeatable: true },
  { name: "query", usage: "\"key\" \"value\"", default: "none", description: "A query parameter with this value", repeatable: true },
  { name: "query_exists", usage: "<key>", default: "none", description: "A query parameter is present", repeatable: true },
  { name: "remote_ip", usage: "<ip or cidr>", default: "any", description: "The client address", repeatable: true },
];
const RETRY: Row = { name: "retry", usage: "exponential [max N] [base D] [cap D] [jitter F]", default: "from `defaults { deliver }`", description: "Retry schedule", values: ["exponential"] };
/** The two kinds of publish, as `publish { … }` and `defaults { publish_policy { … } }` write them. */
const PUBLISH_KINDS: readonly Row[] = [BOOL("direct", "on", "Allow direct publish"), BOOL("managed", "on", "Allow managed publish")];
const TIMEOUT_DELIVER: Row = DURATION("timeout", "from `defaults { deliver }`", "Time one attempt may take");

export const DIRECTIVES: readonly DirectiveInfo[] = [
  ...rows("top", [
    { name: "ingress", usage: "{ … }", default: "listen :8080", description: "The webhook listener", opens: "ingress" },
    { name: "pull_api", usage: "{ … }", default: "listen :9443", description: "The Pull API listener and its limits", opens: "pull_api" },
    { name: "admin_api", usage: "{ … }", default: "listen 127.0.0.1:2019", description: "The Admin API listener", opens: "admin_api" },
    { name: "observability", usage: "{ … }", default: "access and runtime logs on stderr", description: "Access log, runtime log, metrics, tracing", opens: "observability" },
    { name: "queue_limits", usage: "{ … }", default: "max_depth 10000, reject", description: "Queue depth and what happens when it is reached", opens: "queue_limits" },
    { name: "queue_retention", usage: "{ … }", default: "max_age 7d", description: "How long queued messages are kept", opens: "queue_retention" },
    { name: "delivered_retention", usage: "{ … }", default: "off", description: "Keep delivered messages", opens: "delivered_retention" },
    { name: "dlq_retention", usage: "{ … }", default: "30d, 10000", description: "Dead letters kept", opens: "dlq_retention" },
    { name: "attempts_retention", usage: "{ … }", default: "7d, 200000", description: "Attempt records kept", opens: "attempts_retention" },
    { name: "defaults", usage: "{ … }", default: "see the block", description: "Defaults for routes and delivery; egress, publish, backpressure, trend signals", opens: "defaults" },
    { name: "vars", usage: "{ NAME value … }", default: "none", description: "Values for `{vars.NAME}`" },
    { name: "secrets", usage: "{ secret \"ID\" { … } … }", default: "none", description: "Named, rotating secrets for `secret_ref \"ID\"`", opens: "secrets" },
    { name: "inbound", usage: "/path { … } or { /path { … } … }", default: "routes are inbound", description: "Inbound routes: filled by webhooks" },
    { name: "outbound", usage: "/path { … } or { /path { … } … }", default: "none", description: "Outbound routes: filled by publish only, need deliver" },
    { name: "internal", usage: "/path { … } or { /path { … } … }", default: "none", description: "Internal routes: filled by publish only, need pull" },
  ]),
  ...rows("ingress", [
    { name: "listen", usage: "<address>", default: ":8080", description: "Address of the webhook listener" },
    { name: "tls", ...TLS_OPEN },
    { name: "rate_limit", ...RATE_LIMIT_OPEN, default: "none", description: "One bucket for every route without its own" },
  ]),
  ...rows("pull_api", [
    { name: "listen", usage: "<address>", default: ":9443", description: "Address of the Pull API" },
    { name: "prefix", usage: "<path>", default: "none", description: "Path prefix of every Pull API path" },
    { ...AUTH_TOKEN, description: "A global pull token (a route's own `pull { auth token }` replaces them)" },
    NUMBER("max_batch", "100", "Most messages one dequeue leases (at most 1000)"),
    NUMBER("max_lease_batch", "100", "Most lease ids one ack, nack or extend names (at most 100)"),
    { name: "grpc_listen", usage: "<address>", default: "off", description: "Serve the gRPC worker service here (restart to change)" },
    DURATION("default_lease_ttl", "30s", "Lease when the request names none"),
    DURATION("max_lease_ttl", "none", "Cap on a requested lease"),
    DURATION("default_max_wait", "0", "Long-poll wait when the request names none (`off` is 0)"),
    DURATION("max_wait", "none", "Cap on a requested long-poll wait"),
    DURATION("sse_keepalive", "15s", "An SSE stream writes `: keepalive` after this long without a write"),
    DURATION("sse_max_connection", "off", "An SSE stream's response ends cleanly after this long (`off`: no limit)"),
    { name: "rate_limit", ...RATE_LIMIT_OPEN, default: "none", description: "One bucket per bearer token" },
    { name: "tls", ...TLS_OPEN },
  ]),
  ...rows("admin_api", [
    { name: "listen", usage: "<address>", default: "127.0.0.1:2019", description: "Address of the Admin API" },
    { name: "prefix", usage: "<path>", default: "none", description: "Path prefix of every Admin API path" },
    { ...AUTH_TOKEN, description: "An admin token; required when listen is not loopback" },
    { name: "tls", ...TLS_OPEN },
  ]),
  ...rows("tls", [
    { name: "cert_file", usage: "<path>", default: "none", description: "PEM certificate chain (relative to the Spoolfile)" },
    { name: "key_file", usage: "<path>", default: "none", description: "Unencrypted PEM private key" },
    { name: "client_ca", usage: "<path>", default: "none", description: "PEM CA certificates that vouch for clients" },
    { name: "client_auth", usage: "<mode>", default: "none", description: "Whether a client certificate is asked for and verified", values: CLIENT_AUTH_MODES },
  ]),
  ...rows("rate_limit", [
    NUMBER("rps", "none (required)", "Requests per second refilled"),
    NUMBER("burst", "ceil(rps)", "Bucket size"),
  ]),
  ...rows("observability", [
    { name: "access_log", usage: "on|off or { … }", default: "on, stderr", description: "One JSON line per request", values: ON_OFF, opens: "access_log" },
    { name: "runtime_log", usage: "<level> or { … }", default: "info, stderr", description: "The runtime's log level and output", values: LOG_LEVELS, opens: "runtime_log" },
    { name: "metrics", usage: "on|off or { … }", default: "off", description: "Prometheus endpoint", values: ON_OFF, opens: "metrics" },
    { name: "tracing", usage: "on|off or { … }", default: "off", description: "OpenTelemetry spans over OTLP/HTTP", values: ON_OFF, opens: "tracing" },
  ]),
  ...rows("access_log", [BOOL("enabled", "on", "Whether requests are logged"), ...LOG_OUTPUT]),
  ...rows("runtime_log", [{ name: "level", usage: "<level>", default: "info", description: "Lowest level logged", values: LOG_LEVELS }, ...LOG_OUTPUT]),
  ...rows("metrics", [
    BOOL("enabled", "on (in a block)", "Whether the endpoint is served"),
    { name: "listen", usage: "<address>", default: "127.0.0.1:9900", description: "Address of the metrics listener (its own port)" },
    { name: "prefix", usage: "<path>", default: "/metrics", description: "Path of the endpoint" },
  ]),
  ...rows("tracing", [
    BOOL("enabled", "off", "Whether tracing is on (needs collector)"),
    { name: "collector", usage: "<url>", default: "none (required when enabled)", description: "OTLP/HTTP collector" },
    { name: "url_path", usage: "<path>", default: "the collector URL's path, else /v1/traces", description: "Path on the collector" },
    DURATION("timeout", "10s", "Time one export may take"),
    { name: "compression", usage: "none|gzip", default: "none", description: "Body compression", values: ["none", "gzip"] },
    BOOL("insecure", "off", "Allow a plain http:// collector"),
    { name: "proxy_url", usage: "<url>", default: "none", description: "Proxy to the collector" },
    { name: "tls", usage: "{ … }", default: "none", description: "TLS to the collector", opens: "tracing_tls" },
    { name: "retry", usage: "{ … }", default: "off", description: "Exporter retries", opens: "tracing_retry" },
    { name: "header", usage: "\"Name\" \"value\"", default: "none", description: "A header sent with each export", repeatable: true },
  ]),
  ...rows("tracing_tls", [
    { name: "ca_file", usage: "<path>", default: "none", description: "CA certificates for the collector" },
    { name: "cert_file", usage: "<path>", default: "none", description: "Client certificate" },
    { name: "key_file", usage: "<path>", default: "none", description: "Client key" },
    { name: "server_name", usage: "<name>", default: "the collector's host", description: "Name checked on the collector's certificate" },
    BOOL("insecure_skip_verify", "off", "Skip verifying the collector's certificate"),
  ]),
  ...rows("tracing_retry", [
    BOOL("enabled", "off", "Whether exports are retried"),
    DURATION("initial_interval", "5s", "First wait"),
    DURATION("max_interval", "30s", "Longest wait"),
    DURATION("max_elapsed_time", "1m", "Give up after"),
  ]),
  ...rows("queue_limits", [
    NUMBER("max_depth", "10000", "Queued and leased messages at most"),
    { name: "drop_policy", usage: "reject|drop_oldest", default: "reject", description: "What a new message does at max_depth", values: DROP_POLICIES },
  ]),
  ...rows("queue_retention", [
    DURATION("max_age", "7d", "Queued messages older than this are removed (`off`: never)"),
    DURATION("prune_interval", "5m", "How often pruning runs"),
  ]),
  ...rows("delivered_retention", [DURATION("max_age", "off", "Keep delivered messages this long (off: an ack deletes the message)")]),
  ...rows("dlq_retention", [DURATION("max_age", "30d", "Dead letters older than this are removed"), NUMBER("max_depth", "10000", "Dead letters kept at most")]),
  ...rows("attempts_retention", [DURATION("max_age", "7d", "Attempt records older than this are removed"), NUMBER("max_rows", "200000", "Attempt records kept at most")]),
  ...rows("defaults", [
    { name: "max_body", usage: "<size>", default: "2mb", description: "Largest webhook body" },
    { name: "max_headers", usage: "<size>", default: "64kb", description: "Largest header section, as sent" },
    { name: "deliver", usage: "{ retry …; timeout; concurrency }", default: "see the block", description: "Push and exec defaults", opens: "defaults_deliver" },
    { name: "egress", usage: "{ … }", default: "closed", description: "Where push may connect", opens: "egress" },
    { name: "publish_policy", usage: "{ … }", default: "open", description: "Rules for Admin API publish", opens: "publish_policy" },
    { name: "adaptive_backpressure", usage: "{ … }", default: "off", description: "Refuse ingress while the queue is unhealthy", opens: "adaptive_backpressure" },
    { name: "trend_signals", usage: "{ … }", default: "see the block", description: "Thresholds of the backlog trend signals", opens: "trend_signals" },
  ]),
  ...rows("defaults_deliver", [
    { ...RETRY, default: "exponential max 8 base 2s cap 2m jitter 0.2" },
    DURATION("timeout", "10s", "Time one attempt may take"),
    NUMBER("concurrency", "20", "Deliveries in flight per route"),
  ]),
  ...rows("egress", [
    { name: "allow", usage: "<rule>", default: "none", description: "Addresses or hosts push may reach", repeatable: true },
    { name: "deny", usage: "<rule>", default: "none", description: "Addresses or hosts push may not reach", repeatable: true },
    BOOL("https_only", "on", "Refuse plain http:// targets"),
    BOOL("redirects", "off", "Follow redirects"),
    BOOL("dns_rebind_protection", "on", "Check the addresses actually connected to"),
  ]),
  ...rows("publish_policy", [
    ...PUBLISH_KINDS,
    BOOL("allow_pull_routes", "on", "Allow publish to pull routes"),
    BOOL("allow_deliver_routes", "on", "Allow publish to deliver routes"),
    BOOL("require_actor", "off", "A publish must name its actor"),
    BOOL("require_request_id", "off", "A publish must carry a request id"),
    BOOL("fail_closed", "off", "Refuse when the policy cannot be applied"),
    { name: "actor_allow", usage: "\"actor\"", default: "none", description: "An actor allowed to publish", repeatable: true },
    { name: "actor_prefix", usage: "\"prefix\"", default: "none", description: "A prefix of actors allowed to publish", repeatable: true },
  ]),
  ...rows("adaptive_backpressure", [
    BOOL("enabled", "off", "Whether ingress is refused while the queue is unhealthy"),
    NUMBER("min_total", "200", "Messages before it may act"),
    NUMBER("queued_percent", "80", "Share of queued messages that counts as unhealthy"),
    DURATION("ready_lag", "30s", "Lag of ready messages that counts as unhealthy"),
    DURATION("oldest_queued_age", "60s", "Age of the oldest queued message that counts as unhealthy"),
    BOOL("sustained_growth", "on", "Sustained growth counts as unhealthy"),
  ]),
  ...rows("trend_signals", [
    DURATION("window", "15m", "Window of the trend"),
    DURATION("expected_capture_interval", "1m", "How often samples are captured"),
    NUMBER("stale_grace_factor", "3", "Intervals before samples are stale"),
    NUMBER("sustained_growth_consecutive", "3", "Growing samples in a row"),
    NUMBER("sustained_growth_min_samples", "5", "Samples needed"),
    NUMBER("sustained_growth_min_delta", "10", "Smallest growth counted"),
    NUMBER("recent_surge_min_total", "20", "Messages before a surge counts"),
    NUMBER("recent_surge_min_delta", "10", "Smallest surge counted"),
    NUMBER("recent_surge_percent", "50", "Growth that is a surge"),
    NUMBER("dead_share_high_min_total", "10", "Messages before the dead share counts"),
    NUMBER("dead_share_high_percent", "20", "Dead share that is high"),
    NUMBER("queued_pressure_min_total", "20", "Messages before queued pressure counts"),
    NUMBER("queued_pressure_percent", "75", "Queued share that is pressure"),
    NUMBER("queued_pressure_leased_multiplier", "2", "Queued over leased that is pressure"),
  ]),
  ...rows("secrets", [{ name: "secret", usage: "\"ID\" { … }", default: "none", description: "A named secret", repeatable: true, opens: "secret", probeArgs: "\"probe\"" }]),
  ...rows("secret", [
    { name: "value", usage: "<source>", default: "none (required unless runtime on)", description: "The secret (`env:NAME`, `file:PATH` or `raw:VALUE`); with `runtime on`, the first version's seed" },
    { name: "valid_from", usage: "<RFC 3339>", default: "always", description: "First instant it is valid (inclusive)" },
    { name: "valid_until", usage: "<RFC 3339>", default: "never ends", description: "Instant it stops being valid (exclusive)" },
    BOOL("runtime", "off", "Versions added and deleted through the Admin API (needs SPOOL_SECRET_ENCRYPTION_KEY; restart to change)"),
    NUMBER("max_versions", "32", "Most runtime versions kept, 1..1000 (only with `runtime on`)"),
  ]),
  ...rows("matcher", MATCHER),
  ...rows("route", [
    { name: "application", usage: "\"name\"", default: "none", description: "Management label (with endpoint_name)" },
    { name: "endpoint_name", usage: "\"name\"", default: "none", description: "Management label (with application)" },
    { name: "match", usage: "@name… or { … }", default: "POST only", description: "Request criteria", opens: "matcher" },
    { name: "rate_limit", ...RATE_LIMIT_OPEN, default: "the ingress one", description: "This route's own bucket" },
    { ...AUTH_TOKEN, description: "`Authorization: Bearer <token>`" },
    { name: "auth", sub: "basic", usage: "\"user\" \"pass\"", default: "none", description: "HTTP basic auth (literals or placeholders)", repeatable: true },
    { name: "auth", sub: "hmac", usage: "<source> | secret_ref \"ID\"… | { … }", default: "none", description: "Signature check", opens: "auth_hmac" },
    { name: "auth", sub: "forward", usage: "\"<url>\" [{ … }]", default: "none", description: "Ask another service", opens: "auth_forward", probeArgs: "\"https://auth.example/\"" },
    { name: "max_body", usage: "<size>", default: "from defaults", description: "Largest body of this route" },
    { name: "max_headers", usage: "<size>", default: "from defaults", description: "Largest header section of this route" },
    { name: "publish", usage: "on|off or { … }", default: "all on", description: "Admin API publish to this route", values: ON_OFF, opens: "publish" },
    ...PUBLISH_KINDS.map((row) => ({ ...row, name: `publish.${row.name}` })),
    { name: "queue", usage: "<backend> or { backend B }", default: "sqlite", description: "Queue backend (one per instance)", values: QUEUE_BACKENDS, opens: "queue" },
    NUMBER("deliver_concurrency", "defaults deliver concurrency", "Deliveries in flight for the route (1-10000)"),
    { name: "pull", usage: "{ path /p; auth token <source> }", default: "none", description: "Workers pull the route", opens: "pull" },
    { name: "deliver", usage: "\"<url>\" [{ … }]", default: "none", description: "Push to a URL", repeatable: true, opens: "deliver", probeArgs: "\"https://deliver.example/\"" },
    { name: "deliver", sub: "exec", usage: "\"<program>\" [args…] [{ … }]", default: "none", description: "Run a program", repeatable: true, opens: "deliver_exec", probeArgs: "\"/bin/true\"" },
  ]),
  ...rows("auth_hmac", [
    { name: "provider", usage: "<provider>", default: "generic", description: "Fixes the headers and tolerance of a known sender", values: HMAC_PROVIDERS },
    { name: "secret", usage: "<source>", default: "none", description: "A signing secret", repeatable: true },
    { name: "secret_ref", usage: "\"ID\"", default: "none", description: "A named secret from `secrets`", repeatable: true },
    { name: "signature_header", usage: "<name>", default: "X-Signature", description: "Header with the signature" },
    { name: "timestamp_header", usage: "<name>", default: "X-Timestamp", description: "Header with the timestamp" },
    { name: "nonce_header", usage: "<name>", default: "X-Nonce", description: "Header with the nonce" },
    DURATION("tolerance", "5m", "How old a signature may be"),
  ]),
  ...rows("auth_forward", [
    DURATION("timeout", "2s", "Time the service may take"),
    { name: "copy_headers", usage: "\"Name\"", default: "none", description: "Answer header copied into the stored message", repeatable: true },
    { name: "body_limit", usage: "<size>", default: "64kb", description: "Most of the body sent to the service" },
  ]),
  ...rows("publish", [BOOL("enabled", "on", "Whether publish is allowed"), ...PUBLISH_KINDS]),
  ...rows("queue", [{ name: "backend", usage: "<backend>", default: "sqlite", description: "Queue backend (one per instance)", values: QUEUE_BACKENDS }]),
  ...rows("pull", [
    { name: "path", usage: "/p", default: "none (required)", description: "Pull path (under pull_api prefix)" },
    { ...AUTH_TOKEN, description: "A pull token for this route (replaces the global ones)" },
  ]),
  ...rows("deliver", [
    RETRY,
    TIMEOUT_DELIVER,
    { name: "header", usage: "\"Name\" \"value\"", default: "none", description: "A header sent with each delivery", repeatable: true },
    { name: "sign", usage: "hmac|standard_webhooks <source> | … ", default: "unsigned", description: "Sign each delivery", repeatable: true, values: ["hmac", "standard_webhooks", "signature_header", "timestamp_header", "secret_selection"] },
  ]),
  ...rows("deliver_exec", [
    RETRY,
    TIMEOUT_DELIVER,
    { name: "env", usage: "KEY VALUE", default: "none", description: "An environment variable for the program", repeatable: true },
  ]),
];

export function blockInfo(key: string): BlockInfo | undefined {
  return BLOCKS.find((b) => b.key === key);
}

export function directivesIn(block: string): DirectiveInfo[] {
  return DIRECTIVES.filter((d) => d.block === block);
}

/** The row for `name` (with its first argument `firstArg`) in `block`: the one whose sub matches, else the plain one. */
export function findDirective(block: string, name: string, firstArg?: string): DirectiveInfo | undefined {
  const candidates = DIRECTIVES.filter((d) => d.block === block && d.name === name);
  return candidates.find((d) => d.sub !== undefined && d.sub === firstArg) ?? candidates.find((d) => d.sub === undefined) ?? candidates[0];
}

/** How a directive is written: its name, its fixed first argument if any, and its usage. */
export function writtenForm(d: DirectiveInfo): string {
  return [d.name, d.sub, d.usage].filter(Boolean).join(" ");
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

/** The "Directive reference" section of docs/spoolfile.md, generated from the table. */
export function referenceMarkdown(): string {
  const out: string[] = [];
  for (const block of BLOCKS) {
    const list = directivesIn(block.key);
    if (list.length === 0) continue;
    out.push(`#### ${block.title}`, "", block.about, "", "| Directive | Default | Values | Meaning |", "|---|---|---|---|");
    for (const d of list) {
      const written = `\`${cell(writtenForm(d))}\`${d.repeatable ? " (R)" : ""}`;
      out.push(`| ${written} | ${cell(d.default)} | ${d.values ? cell(d.values.join(", ")) : ""} | ${cell(d.description)} |`);
    }
    out.push("");
  }
  return out.join("\n");
}
