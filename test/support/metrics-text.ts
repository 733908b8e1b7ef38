// Reading a Prometheus text exposition (what GET /metrics serves) the way a test asserts on it.

/** The value of one sample line, e.g. `knh_peers{health="dead"}`, as written; undefined if absent. */
export function sampleOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
