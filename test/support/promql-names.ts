// The metric names a PromQL expression reads, for checking a dashboard's or a rule's queries
// against the metrics knh exposes. A small reading of PromQL's grammar, enough for queries written
// with metric names (not `{__name__=...}`): what is left once strings, label matchers, ranges and
// label lists are gone, and functions, keywords and numbers are skipped, is metric names.

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/\boffset\s+-?[\dsmhdwy]+/g, ' '); // offset 5m
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()/g)) {
    const name = m[1] ?? '';
    if (!KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names];
}

/**
 * The metric names a text exposition declares (its `# TYPE` lines), with the series names
 * histograms and summaries have besides (`_bucket`, `_sum`, `_count`).
 */
export function exposedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name = '', type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}
