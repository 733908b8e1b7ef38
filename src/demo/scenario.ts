// The demo's scripted story: crash and restart a peer, then the coordinator, timing each webhook.
import type { Receiver } from './webhook-sink.js';
import type { LocalMesh, MeshNode } from './mesh.js';
import type { Narrator } from './narrator.js';
import {
  allAlive,
  clusterStatusOf,
  peerStatusOf,
  waitForWebhook,
  type WaitOptions,
} from './received-webhooks.js';
import { seconds } from './terminal-style.js';
import { defaultMs } from '../config/settings.js';

export interface ScenarioContext {
  mesh: LocalMesh;
  receiver: Receiver;
  narrator: Narrator;
  /** When the node processes were spawned (epoch ms). */
  spawnedMs: number;
  signal: AbortSignal;
}

/** How long one step may take before the scenario fails. */
export const STEP_TIMEOUT_MS = 15_000;

export interface Measurement {
  label: string;
  ms: number;
}

/** Thrown when a step did not complete in time; names the step. */
export class ScenarioStepFailed extends Error {}

/** Resolves once `condition()` holds, checked every 50 ms. */
function until(
  condition: () => boolean,
  { timeoutMs, signal, what }: Omit<WaitOptions, 'sinceMs'>,
) {
  const deadline = Date.now() + timeoutMs;
  return new Promise<void>((resolve, reject) => {
    const check = () => {
      if (signal?.aborted) reject(new Error(`stopped waiting for ${what}`));
      else if (condition()) resolve();
      else if (Date.now() > deadline)
        reject(new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`));
      else setTimeout(check, 50);
    };
    check();
  });
}

export async function runScenario(ctx: ScenarioContext): Promise<Measurement[]> {
  const { mesh, receiver, narrator, signal } = ctx;
  const timeoutMs = STEP_TIMEOUT_MS;
  const peers = mesh.nodes.length - 1;
  const measured: Measurement[] = [];
  let stepNo = 0;

  const step = async <T>(title: string, run: () => Promise<T>): Promise<T> => {
    narrator.say('SCENARIO', `step ${++stepNo}: ${title}`, 'bold');
    try {
      return await run();
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ScenarioStepFailed(`step ${stepNo} (${title}) failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  };
  const record = (label: string, ms: number) => {
    measured.push({ label, ms });
    narrator.say('SCENARIO', `${label}: ${seconds(ms)}`, 'bold');
  };
  const clusterStatusFrom = (pred: (address: string) => boolean, sinceMs: number, what: string) =>
    waitForWebhook(
      receiver,
      (w) => {
        const c = clusterStatusOf(w);
        return c && pred(c.coordinator_address) ? c : null;
      },
      { timeoutMs, sinceMs, signal, what },
    );
  const peerStatus = (event: 'peer_dead' | 'peer_recovered', node: MeshNode, sinceMs: number) =>
    waitForWebhook(
      receiver,
      (w) => {
        const p = peerStatusOf(w);
        return p?.event === event && p.peer.address === node.address ? p : null;
      },
      {
        // A recovery goes once the peer has stayed up for RECOVERY_HOLD.
        timeoutMs: event === 'peer_recovered' ? timeoutMs + defaultMs('RECOVERY_HOLD') : timeoutMs,
        sinceMs,
        signal,
        what: `the ${event} webhook for ${node.name}`,
      },
    );

  const leader = await step('wait for the election and the first full cluster status', async () => {
    const { webhook, value } = await waitForWebhook(
      receiver,
      (w) => {
        const c = clusterStatusOf(w);
        return c?.reason === 'election' && allAlive(c, peers) ? c : null;
      },
      {
        timeoutMs,
        sinceMs: ctx.spawnedMs,
        signal,
        what: `a cluster status (election) with ${peers}/${peers} peers alive`,
      },
    );
    record(
      'spawned → election settled, first full cluster status',
      webhook.receivedMs - ctx.spawnedMs,
    );
    const node = mesh.byAddress(value.coordinator_address);
    if (!node) throw new Error(`coordinator ${value.coordinator_address} is not in the mesh`);
    return node;
  });

  const victim = mesh.nodes.find((n) => n !== leader) as MeshNode;
  await step(`kill ${victim.name} (SIGKILL), a peer: wait for its peer_dead webhook`, async () => {
    const t = Date.now();
    await mesh.kill(victim.index);
    const { webhook } = await peerStatus('peer_dead', victim, t);
    record(`${victim.name} killed → peer_dead webhook`, webhook.receivedMs - t);
  });

  await step(
    `restart ${victim.name}: wait for its peer_recovered webhook (once up for RECOVERY_HOLD)`,
    async () => {
      const t = Date.now();
      await mesh.restart(victim.index);
      const { webhook } = await peerStatus('peer_recovered', victim, t);
      record(`${victim.name} restarted → peer_recovered webhook`, webhook.receivedMs - t);
    },
  );

  await step(
    `kill the coordinator ${leader.name}: wait for the new coordinator's cluster status`,
    async () => {
      const t = Date.now();
      await mesh.kill(leader.index);
      const { webhook, value } = await clusterStatusFrom(
        (a) => a !== leader.address,
        t,
        `a cluster status from a coordinator other than ${leader.name}`,
      );
      record(
        `${leader.name} killed → cluster status (${value.reason}) from ${narrator.nameOf(value.coordinator_address)}`,
        webhook.receivedMs - t,
      );
    },
  );

  await step(`restart ${leader.name}: it outranks the others, so it takes over again`, async () => {
    const t = Date.now();
    await mesh.restart(leader.index);
    const { webhook } = await clusterStatusFrom(
      (a) => a === leader.address,
      t,
      `a cluster status from ${leader.name}`,
    );
    record(`${leader.name} restarted → its cluster status as coordinator`, webhook.receivedMs - t);
    await until(() => narrator.views.coordinator === leader.address, {
      timeoutMs,
      signal,
      what: `every node to follow ${leader.name}`,
    });
  });
  return measured;
}
