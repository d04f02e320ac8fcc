export function duration(ms: number | null | undefined): string {
  if (ms == null) return "";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function cost(usd: number | null | undefined): string {
  return usd == null ? "" : `$${usd.toFixed(usd < 0.01 ? 4 : 2)}`;
}

export function when(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function percent(fraction: number | null | undefined): string {
  return fraction == null || Number.isNaN(fraction) ? "" : `${(fraction * 100).toFixed(1)}%`;
}

/** A run's status in words for a person: a paused run waits for an answer, not an error. */
export function statusLabel(status: string): string {
  switch (status) {
    case "paused":
      return "Waiting for you";
    case "in_doubt":
      return "In doubt: decide";
    default:
      return status;
  }
}
