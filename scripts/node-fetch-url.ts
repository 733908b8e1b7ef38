// The `url` module as node-fetch 2 (inside @kubernetes/client-node 1.x) sees it in the bundle
// (scripts/bundle.ts). node-fetch parses every request's URL with the legacy
// url.parse(), which Node 24 deprecates at run time (DEP0169) for code outside node_modules, as
// the bundle is. node-fetch hands it either an absolute URL it has just normalised with the WHATWG
// parser, or a relative one that it then refuses for lacking a protocol and host; this parse()
// gives the same fields from the WHATWG parser, so the deprecated one is never called.
import * as url from 'node:url';

/** The fields of url.parse()'s result that node-fetch reads, formats or passes to http.request. */
export interface LegacyUrl {
  protocol: string | null;
  slashes: boolean | null;
  auth: string | null;
  host: string | null;
  port: string | null;
  hostname: string | null;
  hash: string | null;
  search: string | null;
  query: string | null;
  pathname: string | null;
  path: string | null;
  href: string;
}

export function parse(input: string): LegacyUrl {
  let parsed: URL;
  try {
    parsed = new URL(input);
  } catch {
    // Not absolute: no protocol and no host, which node-fetch answers with "Only absolute URLs".
    return {
      protocol: null,
      slashes: null,
      auth: null,
      host: null,
      port: null,
      hostname: null,
      hash: null,
      search: null,
      query: null,
      pathname: input,
      path: input,
      href: input,
    };
  }
  // urlToHttpOptions gives the host name without an IPv6 address's brackets and the user
  // information decoded, as url.parse() did; the rest reads off the WHATWG URL.
  const options = url.urlToHttpOptions(parsed);
  return {
    protocol: parsed.protocol,
    slashes: parsed.host !== '' || /^[a-z][a-z\d+.-]*:\/\//i.test(input),
    auth: options.auth ?? null,
    host: parsed.host || null,
    port: parsed.port || null,
    hostname: options.hostname ?? null,
    hash: parsed.hash || null,
    search: parsed.search || null,
    query: parsed.search ? parsed.search.slice(1) : null,
    pathname: parsed.pathname || null,
    path: options.path ?? null,
    href: parsed.href,
  };
}

// node-fetch reads the module's default export (its CommonJS interop): Node's own `url` with this
// parse() in place of the deprecated one.
export default { ...url, parse };
