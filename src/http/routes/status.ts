// GET /status (what this node knows, as JSON) and GET / (the page that shows it): translation only.
import { createHash } from 'node:crypto';
import type { Logger } from '../../core/logger.js';
import type { SchemaRegistry } from '../../wire/schemas.js';
import { PAGE_SCRIPT, PAGE_STYLE, statusPageHtml } from '../../status/page.js';
import { statusSummaryHtml, summaryUnavailableHtml } from '../../status/page-summary.js';
import type { NodeStatus } from '../../status/status-types.js';
import { Snapshot } from '../snapshot.js';
import type { View } from '../views.js';

export interface StatusViewsOptions {
  /** What the node knows now; called once per snapshot (see maxAgeMs). */
  status: () => NodeStatus | Promise<NodeStatus>;
  /**
   * When given, every answer is checked against schemas/status.schema.json and a mismatch is a 500
   * naming the errors: a status that breaks its contract is a bug to see, not to serve.
   */
  schemas?: SchemaRegistry;
  logger?: Logger;
  /** The clock a snapshot's age is read on (default: Date.now). */
  now?: () => number;
  /** How long a built /status is served (default 1 s; 0: built for every request). */
  maxAgeMs?: number;
}

const hash = (text: string) =>
  `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The page's inline style and script are allowed by hash, nothing else is: no other script, no
 * inline event handler, no frame, and it may fetch only from its own origin (`status`).
 */
export const STATUS_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${hash(PAGE_SCRIPT)}`,
  `style-src ${hash(PAGE_STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** GET /status and GET / (the page), each a snapshot. */
export function statusViews({
  status,
  schemas,
  logger,
  now = Date.now,
  maxAgeMs = 1_000,
}: StatusViewsOptions): View[] {
  /** The status the last build of /status served, for the page's summary; null if it failed. */
  let served: NodeStatus | null = null;
  const snapshot = new Snapshot({
    now,
    maxAgeMs,
    build: async () => {
      served = null;
      const body = await status();
      const check = schemas?.check('status', body) ?? { ok: true };
      if (!check.ok) {
        logger?.error(
          { path: '/status', errors: check.errors },
          'status does not match its schema',
        );
        return {
          status: 500,
          contentType: 'application/json; charset=utf-8',
          body: JSON.stringify({
            error: 'status does not match its schema',
            details: check.errors,
          }),
        };
      }
      served = body;
      return {
        status: 200,
        contentType: 'application/json; charset=utf-8',
        body: JSON.stringify(body),
      };
    },
  });
  // The page carries a summary of the status for a reader without JavaScript: built from /status's
  // own snapshot, and kept as one itself, so that loading the page costs no more than reading it.
  const page = new Snapshot({
    now,
    maxAgeMs,
    build: async () => {
      let summary: string;
      try {
        await snapshot.get();
        summary = served === null ? summaryUnavailableHtml() : statusSummaryHtml(served);
      } catch (err) {
        logger?.error({ err, path: '/' }, 'the status page could not build its summary');
        summary = summaryUnavailableHtml();
      }
      return {
        status: 200,
        contentType: 'text/html; charset=utf-8',
        body: statusPageHtml(summary),
      };
    },
  });

  return [
    // Revalidated (If-None-Match) rather than stored: the page polls it, and a 304 costs nothing.
    {
      path: '/status',
      snapshot,
      headers: { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
    },
    {
      path: '/',
      snapshot: page,
      headers: {
        'content-security-policy': STATUS_PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        // The summary changes with the mesh: revalidated (its ETag) at every load.
        'cache-control': 'no-cache',
      },
    },
  ];
}
