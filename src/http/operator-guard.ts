// The operator's changes (maintenance windows, test alerts) are taken from the pod itself only
// (loopback: `kubectl port-forward`, `kubectl exec`): the right to change is the Kubernetes right
// to reach into a knh pod. A browser on the operator's machine reaches that loopback too, while a
// port-forward runs: any page it shows could send a simple cross-site POST there. So a change must
// also come from a client that is not a browser page of another site: a JSON body (a page cannot
// send `application/json` across sites without a preflight, which nothing here answers), no
// cross-site `Origin` or `Sec-Fetch-Site`, and a `Host` naming this node (a DNS-rebinding page
// names its own).
import type { Request, RequestHandler } from 'express';
import { isLoopback } from '../wire/node-ref.js';

/**
 * The names a request to this pod's loopback carries in its Host (any port: a port-forward's);
 * any address of 127.0.0.0/8 too.
 */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** What a browser-borne request shows, by its headers; null: none of it. */
export type BrowserSign =
  | { why: 'host'; host: string }
  | { why: 'origin'; origin: string }
  | { why: 'fetch-site'; site: string }
  | { why: 'content-type'; type: string | undefined };

/** The host name of a Host header (`name:port`, `[v6]:port`), lower-cased; null if unreadable. */
export function hostName(host: string): string | null {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 1 ? h.slice(1, end) : null;
  }
  const colon = h.indexOf(':');
  const name = colon < 0 ? h : h.slice(0, colon);
  return name === '' ? null : name.replace(/\.$/, '');
}

/** A JSON media type: `application/json` or `application/<anything>+json`, any parameters. */
function isJson(type: string | undefined): boolean {
  if (type === undefined) return false;
  const media = type.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(media);
}

/**
 * Why a change request looks sent by a browser page of another site (or a rebound name), if it
 * does. `needsJson`: the route takes a POST body (a DELETE has none and is never a simple request).
 */
export function browserSign(
  headers: {
    host?: string | undefined;
    origin?: string | undefined;
    fetchSite?: string | undefined;
    contentType?: string | undefined;
  },
  ownNames: ReadonlySet<string>,
  needsJson: boolean,
): BrowserSign | null {
  const { host, origin, fetchSite, contentType } = headers;
  if (host !== undefined) {
    const name = hostName(host);
    if (name === null || !(ownNames.has(name) || isLoopback(name))) return { why: 'host', host };
  }
  // `same-origin`: this node's own page; `none`: typed in by the user. Anything else is another
  // site's page (`cross-site`, `same-site`: another port of localhost is another program).
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    return { why: 'fetch-site', site: fetchSite };
  }
  if (origin !== undefined && !sameOrigin(origin, host)) return { why: 'origin', origin };
  if (needsJson && !isJson(contentType)) return { why: 'content-type', type: contentType };
  return null;
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' && url.host === new URL(`http://${host}`).host;
  } catch {
    // `null` (a sandboxed page, a file) and anything unreadable.
    return false;
  }
}

/**
 * The `curl` that would be taken in place of a refused request: to the port the client used (a
 * port-forward's local port, from its Host) or, when its Host is the refused part, to the
 * listener's own port; OPERATOR_LISTEN may have put the views on a port other than 8080.
 */
export function curlExample(
  req: { method: string; path: string; host?: string | undefined; localPort?: number | undefined },
  sign: BrowserSign,
): string {
  let port = req.localPort;
  if (sign.why !== 'host' && req.host !== undefined) {
    try {
      port = Number(new URL(`http://${req.host}`).port || 80);
    } catch {
      // an unreadable Host: the listener's port
    }
  }
  const target = `localhost${port === undefined ? '' : `:${port}`}${req.path}`;
  return req.method === 'POST'
    ? `curl -XPOST ${target} -H 'content-type: application/json' -d '{…}'`
    : `curl -X${req.method} ${target}`;
}

/** The 403 (415 for the content type) answer for a sign; `curl`: the request that would do. */
export function refusalOf(sign: BrowserSign, curl: string): { status: number; error: string } {
  switch (sign.why) {
    case 'host':
      return {
        status: 403,
        error: `Host ${JSON.stringify(sign.host)} does not name this node: changes are taken only for localhost (kubectl port-forward or exec), e.g. ${curl}`,
      };
    case 'origin':
      return {
        status: 403,
        error: `a request from the page ${JSON.stringify(sign.origin)} of another site is refused: changes are made with a client such as curl, e.g. ${curl}`,
      };
    case 'fetch-site':
      return {
        status: 403,
        error: `a ${sign.site} request from a browser page is refused: changes are made with a client such as curl, e.g. ${curl}`,
      };
    case 'content-type':
      return {
        status: 415,
        error: `the body must be sent as application/json (it was ${sign.type === undefined ? 'sent without a content type' : JSON.stringify(sign.type)}), e.g. ${curl}`,
      };
  }
}

export interface OperatorGuardOptions {
  /** Who may change, by the connection's remote address (default: loopback). */
  mayChange?: (remote: string | undefined) => boolean;
  /** The node's own names beside loopback's (its pod IP, pod name, host name). */
  ownNames?: readonly string[];
  /** What is refused from outside the pod, for its 403 ("maintenance windows are opened …"). */
  fromThePod: string;
  /** Notes a refusal (its log line). */
  onRefused?: (req: Request, why: string) => void;
}

/** Refuses a change from outside the pod (403) or borne by a browser (403/415); else next(). */
export function operatorGuard({
  mayChange = isLoopback,
  ownNames = [],
  fromThePod,
  onRefused,
}: OperatorGuardOptions): RequestHandler {
  const names = new Set([...LOOPBACK_NAMES, ...ownNames.map((n) => n.toLowerCase())]);
  return (req, res, next) => {
    if (!mayChange(req.socket.remoteAddress)) {
      onRefused?.(req, 'not from loopback');
      res.status(403).json({ error: fromThePod });
      return;
    }
    const sign = browserSign(
      {
        host: req.get('host'),
        origin: req.get('origin'),
        fetchSite: req.get('sec-fetch-site'),
        contentType: req.get('content-type'),
      },
      names,
      req.method === 'POST',
    );
    if (sign !== null) {
      const curl = curlExample(
        {
          method: req.method,
          path: req.originalUrl.split('?')[0] ?? req.path,
          host: req.get('host'),
          localPort: req.socket.localPort,
        },
        sign,
      );
      const { status, error } = refusalOf(sign, curl);
      onRefused?.(req, `browser-borne (${sign.why})`);
      res.status(status).json({ error });
      return;
    }
    next();
  };
}
