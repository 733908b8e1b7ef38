// The node's HTTP API: the peer messages (ping, election, announcement, probe heartbeats, relayed
// probes, leaves) and the kubelet's health checks on the peer port, and the operator's views
// (node/operator-views.ts, /metrics) there too, or on a listener of their own (OPERATOR_LISTEN).
import type { RequestListener } from 'node:http';
import type { ListenAddress } from '../config/listen-address.js';
import { buildApp } from '../http/app.js';
import { buildOperatorApp } from '../http/operator-app.js';
import { healthRoutes } from '../http/routes/health.js';
import { leaveRouter } from '../http/routes/leave.js';
import { movedViewsRouter } from '../http/routes/moved-views.js';
import { formatAddress, isLoopback } from '../wire/node-ref.js';
import type { NodeApiParts } from './api-parts.js';
import { operatorViews } from './operator-views.js';

/** The apps a node serves: the peer port's, and the operator's own listener's (OPERATOR_LISTEN). */
export interface NodeApps {
  peer: RequestListener;
  /** Null: the operator's views are on the peer port. */
  operator: RequestListener | null;
}

export function nodeApps(p: NodeApiParts): NodeApps {
  const { self, schemas, auth, clock, leadership, membership } = p;
  const { election } = leadership;
  const http = p.logger.child({ component: 'http' });
  const moved = p.config.operatorListener;
  const operator = operatorViews(p);
  const metrics = () => p.metrics.render();
  const onBodyRefused: Parameters<typeof buildApp>[0]['onBodyRefused'] = (sender, reason) =>
    p.metrics.peerMessages.refusedBody(sender, reason);
  const peer = buildApp({
    schemas,
    logger: http,
    auth,
    selfAddress: self.address,
    isPeer: (address) => membership.isPeer(address),
    isPeerIp: (ip) => membership.isPeerIp(ip),
    onRefused: (reason) => p.metrics.peerMessages.refusedMessage(reason),
    onBodyRefused,
    now: () => clock.now(),
    api: {
      ping: () => ({
        id: self.id,
        address: self.address,
        node_name: p.config.nodeName,
        role: election.claimedRole,
        epoch: election.epoch,
        coordinator: election.coordinator,
      }),
      election: (request) => {
        membership.spoke(request.from.address);
        return election.handleElection(request);
      },
      announcement: (announcement, protocol) => {
        membership.spoke(announcement.from.address);
        return leadership.announcement(announcement, protocol);
      },
      heartbeat: ({ from, epoch }) => leadership.heartbeat(from, epoch),
      probe: (request) => p.relay.handle(request),
      ...(moved ? {} : { metrics }),
      echo: (b) => p.paths.echo(b),
      pathReport: (b) => p.paths.report(b),
      pathPull: (b) => p.paths.pulled(b),
    },
    routers: [
      healthRoutes(p.health),
      leaveRouter({
        schemas,
        auth,
        logger: http,
        onLeave: (notice) => membership.leave(notice.from),
      }),
      ...(moved ? [movedViewsRouter(whereOperatorIs(moved))] : operator.routers),
    ],
    ...(moved ? {} : { views: operator.views }),
  });
  if (!moved) return { peer, operator: null };
  const operatorApp = buildOperatorApp({
    logger: http,
    metrics,
    // The health checks too: one port-forward to this listener then shows everything.
    routers: [healthRoutes(p.health), ...operator.routers],
    views: operator.views,
    now: () => clock.now(),
    onBodyRefused,
  });
  return { peer, operator: operatorApp };
}

/** The operator's listener as the peer port's 404s name it: a port, or the one address. */
function whereOperatorIs({ host, port }: ListenAddress): string {
  if (host === '0.0.0.0' || host === '::') return `port ${port}`;
  const address = formatAddress(host, port);
  return isLoopback(host)
    ? `${address} (loopback only: reach it with kubectl port-forward)`
    : address;
}
