// Summarises a V8 .cpuprofile (node --cpu-prof, or SPOOL_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=…" on a
// benchmark's `spool run`): the time spent in each function itself, and with what it called, or per file.
// The profile samples wall time: a blocking call (a SQLite COMMIT's fsync) counts as its caller's time.
// Run: node dist/test/bench/cpuprofile-summary.js <file.cpuprofile> [top=40] [function|inclusive|file] [requests]
// With the number of requests the profiled process answered, each line also shows µs per request.
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg = "40", view = "function", requestsArg = "0"] = process.argv.slice(2);
if (!file) {
  console.error("usage: cpuprofile-summary <file.cpuprofile> [top] [function|inclusive|file] [requests]");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
const requests = Number(requestsArg);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

/** `dist/…` or `node_modules/…` instead of the whole file URL. */
const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, "$1/");
const frameName = (node: ProfileNode) => `${node.callFrame.functionName || "(anonymous)"} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;

const microsByNode = new Map<number, number>();
profile.samples.forEach((id, index) => microsByNode.set(id, (microsByNode.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

let idle = 0;
let busy = 0;
const totals = new Map<string, number>();
const add = (key: string, micros: number) => totals.set(key, (totals.get(key) ?? 0) + micros);
for (const [id, micros] of microsByNode) {
  const node = byId.get(id)!;
  if (node.callFrame.functionName === "(idle)") {
    idle += micros;
    continue;
  }
  busy += micros;
  if (view === "file") add(shortUrl(node.callFrame.url) || node.callFrame.functionName, micros);
  else if (view === "inclusive") {
    // Each function once per sample, however often it is on the stack (recursion).
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) seen.add(frameName(byId.get(at)!));
    for (const key of seen) add(key, micros);
  } else add(frameName(node), micros);
}

console.log(`busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`);
const top = [...totals].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg));
for (const [key, micros] of top) {
  const perRequest = requests > 0 ? `${(micros / requests).toFixed(2).padStart(7)} µs/req  ` : "";
  console.log(`${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${perRequest}${key}`);
}
