// The url.parse() that node-fetch gets inside the Kubernetes client bundle gives what Node's legacy
// parser gives for every URL node-fetch hands it: the request goes to the same host, port and path.
import * as url from 'node:url';
import { expect } from 'chai';
import nodeFetchUrl, { parse } from '../../scripts/node-fetch-url.js';

/** Node's own url.parse(), without its deprecation warning (Node 24) in the test's output. */
function legacyParse(input: string): url.UrlWithStringQuery {
  const before = process.noDeprecation;
  process.noDeprecation = true;
  try {
    return url.parse(input);
  } finally {
    process.noDeprecation = before;
  }
}

const FIELDS = [
  'protocol',
  'slashes',
  'auth',
  'host',
  'port',
  'hostname',
  'hash',
  'search',
  'query',
  'pathname',
  'path',
  'href',
] as const;

// node-fetch passes an absolute URL through `new URL(…).toString()` first: these are as it sends them.
const ABSOLUTE = [
  'https://10.96.0.1:443/apis/discovery.k8s.io/v1/namespaces/knh/endpointslices',
  'https://10.96.0.1/apis/discovery.k8s.io/v1/namespaces/knh/endpointslices?labelSelector=app%3Dknh&watch=true&resourceVersion=12345&allowWatchBookmarks=true',
  'http://127.0.0.1:39127/apis/discovery.k8s.io/v1/namespaces/knh/endpointslices?limit=500&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ',
  'https://kubernetes.default.svc/api?x=1#frag',
  'https://[fd00:10:96::1]:6443/apis/discovery.k8s.io/v1/endpointslices',
  'https://user:p%40ss@api.example.com:8443/path/with%20space/',
  'https://api.example.com/',
];

describe('the url.parse() of node-fetch in the Kubernetes client bundle', () => {
  for (const input of ABSOLUTE) {
    const normalised = new URL(input).toString();
    it(`parses ${normalised} as Node's legacy parser does`, () => {
      const ours = parse(normalised);
      const theirs = legacyParse(normalised);
      for (const field of FIELDS) expect(ours[field], field).to.deep.equal(theirs[field]);
    });
  }

  it('gives a relative URL no protocol and no host, which node-fetch refuses', () => {
    for (const input of ['/api/v1/pods', 'endpointslices?watch=1']) {
      const ours = parse(input);
      expect(ours.protocol).to.equal(null);
      expect(ours.hostname).to.equal(null);
      expect(ours.protocol).to.equal(legacyParse(input).protocol);
      expect(ours.hostname).to.equal(legacyParse(input).hostname);
    }
  });

  it("formats back to the same URL with Node's url.format(), as node-fetch's Request.url does", () => {
    for (const input of ABSOLUTE) {
      const normalised = new URL(input).toString();
      expect(url.format(parse(normalised) as url.UrlObject)).to.equal(normalised);
    }
  });

  it("is the module's default export, beside the rest of node:url", () => {
    expect(nodeFetchUrl.parse).to.equal(parse);
    expect(nodeFetchUrl.URL).to.equal(url.URL);
    expect(nodeFetchUrl.format).to.equal(url.format);
  });
});
