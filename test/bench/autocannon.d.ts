// autocannon ships no types; this is the part of its API the benchmarks use.
declare module "autocannon" {
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    body?: string | Buffer;
    headers?: Record<string, string>;
  }
  interface Result {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number; average: number };
    non2xx: number;
    "2xx": number;
    errors: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
