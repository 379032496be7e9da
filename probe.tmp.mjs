import { compileSpoolfile } from "./dist/compiler/index.js";
const probes = {
  "": "",
  ingress: ["ingress"], "ingress tls": ["ingress","tls"], "ingress rate_limit": ["ingress","rate_limit"],
  pull_api: ["pull_api"], "pull_api tls": ["pull_api","tls"], "pull_api rate_limit": ["pull_api","rate_limit"],
  admin_api: ["admin_api"], "admin_api tls": ["admin_api","tls"],
  observability: ["observability"], "access_log": ["observability","access_log"], runtime_log: ["observability","runtime_log"], metrics:["observability","metrics"], tracing:["observability","tracing"], "tracing tls":["observability","tracing","tls"], "tracing retry":["observability","tracing","retry"],
  queue_limits:["queue_limits"], queue_retention:["queue_retention"], delivered_retention:["delivered_retention"], dlq_retention:["dlq_retention"], attempts_retention:["attempts_retention"],
  defaults:["defaults"], "defaults deliver":["defaults","deliver"], "defaults egress":["defaults","egress"], "defaults publish_policy":["defaults","publish_policy"], "defaults adaptive_backpressure":["defaults","adaptive_backpressure"], "defaults trend_signals":["defaults","trend_signals"],
  "defaults deliver retry":["defaults","deliver","retry"],
  secrets:["secrets"], secret:["secrets",'secret "id"'],
  matcher:["@m"], route:["/p"], "route match":["/p","match"], "route rate_limit":["/p","rate_limit"], "route auth hmac":["/p","auth hmac"], "route auth forward":['/p','auth forward "https://a.example/"'],
  "route publish":["/p","publish"], "route queue":["/p","queue"], "route pull":["/p","pull"], "route deliver":["/p",'deliver "https://a.example/"'], "route deliver exec":["/p",'deliver exec "/bin/true"'],
  "route deliver retry":["/p",'deliver "https://a.example/"', "retry"], "route deliver sign": ["/p",'deliver "https://a.example/"', "sign"],
};
for (const [k, path] of Object.entries(probes)) {
  let text = "zz_probe 1";
  for (const o of [...(path||[])].reverse()) text = `${o} {\n${text}\n}`;
  const r = compileSpoolfile(text + "\n", "p");
  const d = r.diagnostics.find(d => d.code === "unknown_directive" && d.found === "zz_probe");
  console.log(k.padEnd(30), d ? d.expected : "NONE: " + r.diagnostics.map(d=>d.code+":"+d.message).slice(0,2).join(" | "));
}
