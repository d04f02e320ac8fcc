// `sr eval`'s results.json (docs/eval.md), read in the browser.

export interface Score {
  kind: string;
  passed: boolean;
  score: number;
  detail: string;
}

export interface CaseResult {
  id: string;
  workload: string;
  entry: string | null;
  model: string | null;
  passed: boolean;
  score: number;
  scores: Score[];
  output: unknown;
  error: string | null;
  tokens: { input: number; output: number };
  cost_usd: number | null;
  latency_ms: number;
  model_calls: number;
  events?: string | null;
  /** The run of the case in this server, when the server ran it. */
  run?: string;
}

export interface Summary {
  workload: string;
  entry: string | null;
  model: string | null;
  passed: number;
  total: number;
  pass_rate: number;
  mean_score: number;
  tokens: { input: number; output: number };
  cost_usd: number | null;
  p50_latency_ms: number;
  p95_latency_ms: number;
}

export interface Results {
  cases: CaseResult[];
  summary: Summary[];
}

export interface Findings {
  precision: number;
  recall: number;
  f1: number;
}

export function parseResults(text: string): Results {
  const value = JSON.parse(text) as Partial<Results>;
  if (!value || !Array.isArray(value.cases) || !Array.isArray(value.summary)) {
    throw new Error("not an sr eval results.json: it needs `cases` and `summary` lists");
  }
  return value as Results;
}

export function variant(v: { workload: string; entry: string | null; model: string | null }): string {
  return [v.workload, v.entry ?? "", v.model ?? ""].join(" · ").replace(/( · )+$/, "");
}

const FINDINGS = /\((\d+) of (\d+) expected, (\d+) reported\)/;

/**
 * Precision, recall and F1 over a variant's `findings` scores (micro-averaged: matched,
 * expected and reported findings summed over its cases); `undefined` where none scored.
 */
export function findings(cases: CaseResult[]): Findings | undefined {
  let matched = 0;
  let expected = 0;
  let reported = 0;
  let any = false;
  for (const c of cases) {
    for (const score of c.scores) {
      const m = score.kind === "findings" ? FINDINGS.exec(score.detail) : null;
      if (!m) continue;
      any = true;
      matched += Number(m[1]);
      expected += Number(m[2]);
      reported += Number(m[3]);
    }
  }
  if (!any) return undefined;
  const precision = reported === 0 ? (expected === 0 ? 1 : 0) : matched / reported;
  const recall = expected === 0 ? 1 : matched / expected;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}
