// The maintenance API: list, open and end windows that pause alerting. Changes are taken only from
// the pod itself and not from a browser page (operator-guard.ts), so the right to pause alerts is
// the Kubernetes right to reach into a knh pod; anyone else may read.
import { type MaintenanceWindow, wireWindow } from '../../wire/maintenance-window.js';
import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import { parseDuration } from '../../config/duration.js';
import type { Logger } from '../../core/logger.js';
import { rejectMalformed } from '../reject-malformed.js';
import { operatorGuard } from '../operator-guard.js';
import type { SchemaRegistry } from '../../wire/schemas.js';
import {
  isActive,
  MAX_WINDOW_MS,
  MAX_WINDOWS,
  unknownNames,
  type MaintenanceBook,
} from '../../maintenance/windows.js';
import type { PeerNames } from '../../wire/maintenance-window.js';

/** Known nodes an answer refusing unknown ones names, at most. */
const KNOWN_LISTED = 20;

export interface MaintenanceRequest {
  nodes?: string[];
  duration: string;
  reason: string;
}

export interface MaintenanceRoutesOptions {
  book: MaintenanceBook;
  schemas: SchemaRegistry;
  logger: Logger;
  now: () => number;
  /** Called after a window is opened or ended here, to share it at once. */
  onChanged?: () => void;
  /** Who may open and end windows, by the connection's remote address (default: loopback). */
  mayChange?: (remote: string | undefined) => boolean;
  /** This node's own names a change's Host may carry, beside loopback's. */
  ownNames?: readonly string[];
  /**
   * The nodes this node knows (itself, its peers, those that left): a window naming another one
   * is refused, since it would pause nothing. Absent: names are not checked.
   */
  knownNodes?: () => readonly PeerNames[];
}

export function maintenanceRouter({
  book,
  schemas,
  logger,
  now,
  onChanged,
  mayChange,
  ownNames,
  knownNodes,
}: MaintenanceRoutesOptions): Router {
  const router = Router();
  const guard = operatorGuard({
    ...(mayChange ? { mayChange } : {}),
    ...(ownNames ? { ownNames } : {}),
    fromThePod:
      'maintenance windows are opened and ended from the pod itself: kubectl port-forward to it, or kubectl exec into it, and call localhost',
    onRefused: (req, why) =>
      logger.warn(
        { path: req.path, from: req.socket.remoteAddress, reason: why },
        `maintenance change refused: ${why}`,
      ),
  });

  router.get('/maintenance', (_req, res) => {
    const t = now();
    res.set('cache-control', 'no-store');
    res.json({
      windows: book
        .all()
        .filter((w) => isActive(w, t))
        .map(wireWindow),
    });
  });

  router.post('/maintenance', guard, (req, res) => {
    if (rejectMalformed(schemas, logger, 'maintenance-request', req, res)) return;
    const body = req.body as MaintenanceRequest;
    const ms = parseDuration(body.duration);
    if (ms === null || ms < 1_000 || ms > MAX_WINDOW_MS) {
      res.status(400).json({
        error: `duration ${JSON.stringify(body.duration)}: expected from 1 second to 7 days, as seconds ("900") or with a unit ("90s", "30m", "2h")`,
      });
      return;
    }
    const unknown = knownNodes && body.nodes ? unknownNames(body.nodes, knownNodes()) : [];
    if (knownNodes && unknown.length > 0) {
      const known = knownNodes();
      const names = [...new Set(known.map((k) => k.nodeName))].sort();
      const listed = names.slice(0, KNOWN_LISTED).join(', ');
      const more = names.length > KNOWN_LISTED ? ` and ${names.length - KNOWN_LISTED} more` : '';
      res.status(400).json({
        error: `unknown ${unknown.length === 1 ? 'node' : 'nodes'} ${unknown.map((n) => JSON.stringify(n)).join(', ')}: not the name, id (name@ip) or address (ip:port) of a node this one knows, so the window would pause nothing about ${unknown.length === 1 ? 'it' : 'them'}; known nodes: ${listed}${more}`,
        details: unknown,
      });
      return;
    }
    const t = now();
    const window: MaintenanceWindow = {
      id: randomBytes(6).toString('hex'),
      scope: body.nodes ? 'nodes' : 'mesh',
      nodes: body.nodes ? [...new Set(body.nodes)] : [],
      starts: t,
      until: t + ms,
      reason: body.reason,
      cancelled: false,
    };
    book.merge([window], t);
    if (!book.all().some((w) => w.id === window.id)) {
      // The book is full of windows ending later (ended ones are kept until their end, so that
      // the end reaches every node): this one would be dropped at once, pausing nothing.
      res.status(409).json({
        error: `this node already holds ${MAX_WINDOWS} running maintenance windows; none can be added before some of them end`,
      });
      return;
    }
    logger.warn(
      { event: 'maintenance-opened', window: wireWindow(window) },
      `maintenance window ${window.id} opened: alerts about ${window.scope === 'mesh' ? 'every node' : window.nodes.join(', ')} are held until ${new Date(window.until).toISOString()} (${window.reason})`,
    );
    onChanged?.();
    res.status(201).json({ window: wireWindow(window) });
  });

  router.delete('/maintenance/:id', guard, (req, res) => {
    const id = String(req.params.id);
    // The window schema's id pattern: anything else names no window, and is not echoed back.
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(id)) {
      res.status(400).json({ error: 'a maintenance window id is 1 to 64 of A-Z a-z 0-9 _ . -' });
      return;
    }
    const ended = book.cancel(id, now());
    if (!ended) {
      res.status(404).json({ error: `no running maintenance window ${id}` });
      return;
    }
    logger.warn(
      { event: 'maintenance-ended', window: wireWindow(ended) },
      `maintenance window ${id} ended`,
    );
    onChanged?.();
    res.json({ window: wireWindow(ended) });
  });

  return router;
}
