// Parses durations: plain seconds as KNH wrote them ("2", "0.5") or with a unit ("500ms", "2s", "1m").

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or null when the text is not a duration. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m?.[1]) return null;
  const ms = Number(m[1]) * (UNITS[m[2] ?? 's'] ?? 1000);
  return Number.isFinite(ms) ? Math.round(ms) : null;
}

export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
