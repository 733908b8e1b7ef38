// POST /leave: a peer shutting down in order says so; it is then neither probed nor elected.
import { Router } from 'express';
import type { Logger } from '../../core/logger.js';
import { parseAddress, remoteIp } from '../../wire/node-ref.js';
import type { PeerAuth } from '../../auth/peer-auth.js';
import { answerPeer } from '../peer-guard.js';
import { rejectMalformed } from '../reject-malformed.js';
import { sentBy } from '../sender.js';
import type { LeaveNotice } from '../../wire/peer-messages.js';
import type { SchemaRegistry } from '../../wire/schemas.js';

export function leaveRouter(opts: {
  schemas: SchemaRegistry;
  /** Peer authentication: the answer is signed for the (already verified) request. */
  auth?: PeerAuth | null;
  logger: Logger;
  /** Returns false when the sender is not a discovered peer (nothing changes). */
  onLeave(notice: LeaveNotice): boolean;
}): Router {
  const router = Router();
  router.post('/leave', (req, res) => {
    if (rejectMalformed(opts.schemas, opts.logger, 'leave', req, res)) return;
    const notice = req.body as LeaveNotice;
    // Only a node itself says it is leaving: the request must come from the address it names.
    if (!sentBy(req.socket.remoteAddress, notice.from.address)) {
      opts.logger.warn(
        { path: req.path, from: remoteIp(req.socket.remoteAddress), sender: notice.from },
        'leave refused: not sent from the leaving node',
      );
      res.status(403).json({
        error: `a leave for ${notice.from.address} must come from ${parseAddress(notice.from.address)?.ip ?? 'that address'}`,
      });
      return;
    }
    if (!opts.onLeave(notice)) {
      opts.logger.warn(
        { path: req.path, from: req.ip, sender: notice.from },
        'leave from a stranger ignored',
      );
      res.status(403).json({ error: `${notice.from.address} is not a peer of this node` });
      return;
    }
    answerPeer(opts.auth ?? null, res, { ok: true });
  });
  return router;
}
