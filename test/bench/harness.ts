/**
 * Benchmark harness: every `*.bench.ts` file in this folder exports `run(report)`; results are
 * printed and written to `bench-results.json` as `{ name, value, unit, baseline?, ratio? }`.
 * Targets are ratios against a baseline measured in the same run, never absolute timings.
 */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  /** Name of the baseline entry this one is compared with. */
  baseline?: string;
  /** value / baseline value (or the inverse for throughputs, as the bench states). */
  ratio?: number;
  /** The target, in words, e.g. "ratio < 1.2". */
  target?: string;
  /** Whether the target was met in this run. */
  met?: boolean;
}

export type Report = (result: BenchResult) => void;

export interface BenchModule {
  /** Human title printed before the bench runs. */
  title: string;
  run(report: Report): Promise<void>;
}

/** Time per iteration in microseconds for a sync function (median of `rounds` batches). */
export function percentiles(samples: number[], ps: number[]): number[] {
  const sorted = [...samples].sort((a, b) => a - b);
  return ps.map((p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
}
