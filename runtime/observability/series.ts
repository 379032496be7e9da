// Labelled counter and histogram families for the per-request hot paths (spool_store_operation_*,
// one observation per store call). prom-client's own Counter and Histogram resolve the label object
// on every call: they validate it, build a hash string from it and look the series up by that
// string, which cost about as much as the rest of the ingress handler together. These families
// resolve a label set once into a series handle that the caller keeps; recording is then a few
// additions. They register in the same prom-client Registry and expose exactly the text
// prom-client's families do (test/runtime/metrics.test.ts compares the two).
import type { Registry } from "prom-client";

interface FamilyOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: readonly Registry[];
}

type Labels<L extends string> = Readonly<Record<L, string>>;

/** What prom-client's Registry reads from a metric when it renders the exposition text. */
interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

abstract class Family<L extends string, S extends { live: boolean }> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = "sum";
  abstract readonly type: "counter" | "histogram";
  private readonly labelNames: readonly L[];
  private readonly byKey = new Map<string, { labels: Labels<L>; series: S }>();

  constructor(options: FamilyOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  /** The series of one label set; keep it and record on it. */
  series(labels: Labels<L>): S {
    // Label values cannot contain "\u0000" in the exposition, so it cannot make two sets collide.
    let key = "";
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let entry = this.byKey.get(key);
    if (!entry) {
      const own = {} as Record<L, string>;
      for (const name of this.labelNames) {
        if (typeof labels[name] !== "string") throw new Error(`${this.name}: label ${name} is missing`);
        own[name] = labels[name];
      }
      entry = { labels: own, series: this.newSeries() };
      this.byKey.set(key, entry);
    }
    return entry.series;
  }

  /** Like prom-client's reset(): every series disappears from the exposition until it records again. */
  reset(): void {
    for (const { series } of this.byKey.values()) this.clear(series);
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }> {
    const values: ExportedValue[] = [];
    for (const { labels, series } of this.byKey.values()) if (series.live) this.export(labels, series, values);
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  protected abstract newSeries(): S;
  protected abstract clear(series: S): void;
  protected abstract export(labels: Labels<L>, series: S, into: ExportedValue[]): void;
}

export class CounterSeries {
  live = false;
  value = 0;

  inc(by = 1): void {
    if (!(by >= 0) || !Number.isFinite(by)) throw new Error(`a counter cannot move by ${by}`);
    this.value += by;
    this.live = true;
  }
}

export class LabelledCounter<L extends string> extends Family<L, CounterSeries> {
  readonly type = "counter";

  inc(labels: Labels<L>, by = 1): void {
    this.series(labels).inc(by);
  }

  protected newSeries(): CounterSeries {
    return new CounterSeries();
  }

  protected clear(series: CounterSeries): void {
    series.value = 0;
    series.live = false;
  }

  protected export(labels: Labels<L>, series: CounterSeries, into: ExportedValue[]): void {
    into.push({ labels: { ...labels }, value: series.value });
  }
}

export class HistogramSeries {
  live = false;
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative); the last slot holds those above every bound. */
  readonly perBucket: Float64Array;

  constructor(private readonly bounds: readonly number[]) {
    this.perBucket = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new Error(`a histogram cannot observe ${value}`);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.perBucket[i]++;
    this.count++;
    this.sum += value;
    this.live = true;
  }
}

export class LabelledHistogram<L extends string> extends Family<L, HistogramSeries> {
  readonly type = "histogram";
  private readonly bounds: readonly number[];

  constructor(options: FamilyOptions<L> & { buckets: readonly number[] }) {
    super(options);
    this.bounds = [...options.buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels<L>, value: number): void {
    this.series(labels).observe(value);
  }

  /** Starts timing; the returned function observes the elapsed seconds and returns them. */
  startTimer(labels: Labels<L>): () => number {
    const series = this.series(labels);
    const startedMs = performance.now();
    return () => {
      const seconds = (performance.now() - startedMs) / 1000;
      series.observe(seconds);
      return seconds;
    };
  }

  protected newSeries(): HistogramSeries {
    return new HistogramSeries(this.bounds);
  }

  protected clear(series: HistogramSeries): void {
    series.perBucket.fill(0);
    series.count = 0;
    series.sum = 0;
    series.live = false;
  }

  protected export(labels: Labels<L>, series: HistogramSeries, into: ExportedValue[]): void {
    const bucket = `${this.name}_bucket`;
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += series.perBucket[i];
      into.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: bucket });
    });
    into.push({ labels: { le: "+Inf", ...labels }, value: series.count, metricName: bucket });
    into.push({ labels: { ...labels }, value: series.sum, metricName: `${this.name}_sum` });
    into.push({ labels: { ...labels }, value: series.count, metricName: `${this.name}_count` });
  }
}
