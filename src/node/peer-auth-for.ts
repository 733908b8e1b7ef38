// Peer authentication as the settings ask: the secrets from PEER_SECRET_FILE (re-read as it
// rotates) or PEER_SECRET, or none (and a warning).
import { PeerAuth } from '../auth/peer-auth.js';
import { secretFileSource } from '../auth/peer-secret.js';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';

export function peerAuthFor(config: Config, clock: Clock, logger: Logger): PeerAuth | null {
  const initial = config.peerSecrets;
  if (initial === null) {
    logger.warn(
      { event: 'peer-auth-off' },
      'peer authentication is off: election messages and announcements are taken from any discovered peer IP unsigned; set PEER_SECRET_FILE (a mounted Secret) or PEER_SECRET on every node',
    );
    return null;
  }
  const file = config.peerSecretFile;
  const secrets = file
    ? secretFileSource({
        path: file,
        initial,
        now: () => clock.now(),
        onError: (error) =>
          logger.warn({ event: 'peer-secret-unreadable', error }, 'keeping the last peer secrets'),
        onChange: (count) =>
          logger.info({ event: 'peer-secret-changed', secrets: count }, 'peer secrets reloaded'),
      })
    : () => initial;
  return new PeerAuth({ secrets, now: () => clock.now(), maxSkewMs: config.peerAuthMaxSkewMs });
}
