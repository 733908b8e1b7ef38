// A URL as logs show it. A receiver's URL often carries its secret: in the path (Slack, Discord
// and many webhook receivers), the query, or the user info. By default only the scheme, host and
// port are shown; LOG_RECEIVER_URLS=path adds the path, never the rest. Pure.

/** How much of a receiver URL logs show (LOG_RECEIVER_URLS). */
export type UrlShown = 'origin' | 'path';

export function shownUrl(url: string, mode: UrlShown = 'origin'): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '<not shown: not a URL>';
  }
  const user = u.username || u.password ? '***@' : '';
  const more = u.pathname !== '/' || u.search !== '' || u.hash !== '';
  if (mode === 'origin')
    return more ? `${u.protocol}//${user}${u.host}/…` : `${u.protocol}//${user}${u.host}`;
  const query = u.search ? '?***' : '';
  const fragment = u.hash ? '#***' : '';
  return `${u.protocol}//${user}${u.host}${u.pathname}${query}${fragment}`;
}
