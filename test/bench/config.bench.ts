// Config benchmark: `fmt` and `validate` on a generated Spoolfile with 5,000 routes.
// Target (issue 2): under one second each on this 2-core machine.
import { compileSpoolfile, formatText } from "../../compiler/index.js";

const ROUTES = 5000;

function generateSpoolfile(routes: number): string {
  const lines = [
    "# generated: 5,000 routes of every kind",
    "ingress { listen :8080; rate_limit { rps 500; burst 1000 } }",
    "pull_api { listen :9443; prefix /pull; auth token raw:global; max_lease_ttl 5m; max_wait 30s }",
    "defaults { egress { https_only off; dns_rebind_protection off }; deliver { retry exponential max 5 base 1s cap 1m jitter 0.1; timeout 5s } }",
    "secrets { secret \"s1\" { value raw:k1 } }",
    "@json { header \"Content-Type\" \"application/json\" }",
  ];
  for (let i = 0; i < routes; i++) {
    switch (i % 4) {
      case 0:
        lines.push(`/hooks/pull-${i} { # route ${i}\n  application "app-${i % 97}"\n  endpoint_name "ep-${i}"\n  auth hmac { provider github; secret raw:s${i} }\n  pull { path /p${i}; auth token raw:t${i} }\n}`);
        break;
      case 1:
        lines.push(`/hooks/push-${i} {\n  match @json\n  rate_limit { rps 10 }\n  deliver "http://10.0.${i % 250}.1/in/${i}" { timeout 2s; header "X-Route" "${i}"; sign hmac secret_ref "s1" }\n  deliver "http://10.1.${i % 250}.1/in/${i}" {}\n}`);
        break;
      case 2:
        lines.push(`outbound /jobs/exec-${i} { deliver exec "/usr/local/bin/job" "${i}" { timeout 30s; env N ${i} } }`);
        break;
      default:
        lines.push(`internal {\n  /jobs/int-${i} { pull { path /int${i} } }\n}`);
    }
  }
  return lines.join("\n\n") + "\n";
}

function timeMs(fn: () => void, runs: number): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)];
}

const text = generateSpoolfile(ROUTES);
const file = "bench.spool";
// Warm up the parser (Chevrotain self-analysis happens once per process) and the JIT.
formatText(text, file);
compileSpoolfile(text, file, { env: {} });

const fmtMs = timeMs(() => {
  const result = formatText(text, file);
  if (!result.ok) throw new Error("generated file did not parse");
}, 5);
const validateMs = timeMs(() => {
  const result = compileSpoolfile(text, file, { env: {} });
  if (!result.config) throw new Error(`generated file invalid: ${result.diagnostics[0]?.message}`);
}, 5);

const kb = (Buffer.byteLength(text) / 1024).toFixed(0);
console.log(`Spoolfile: ${ROUTES} routes, ${kb} KB`);
console.log(`fmt       median ${fmtMs.toFixed(1)} ms   target < 1000 ms   ${fmtMs < 1000 ? "OK" : "MISSED"}`);
console.log(`validate  median ${validateMs.toFixed(1)} ms   target < 1000 ms   ${validateMs < 1000 ? "OK" : "MISSED"}`);
