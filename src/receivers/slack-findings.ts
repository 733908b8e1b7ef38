// Slack's words for the findings of every node's paths (peer_degraded … partition): a group's list
// items, and a single alert's sentence and fields. Warnings: each says its nodes still answer. Pure.
import type { Alert } from '../wire/alert.js';
import type { AlertChange } from '../alerts/receiver-adapter.js';
import { nodeNameOf } from '../wire/node-ref.js';
import {
  capitalized,
  factsText,
  findingSentence,
  findingState,
  latencyText,
  lossText,
  sidesText,
  someOf,
  type FindingKind,
  authText,
} from './finding-text.js';
import {
  coordinatorOf,
  duration,
  endOf,
  field,
  fit,
  LISTED,
  podField,
  slackDate,
  slackWords,
  utc,
  type Mrkdwn,
} from './slack-mrkdwn.js';

const isPath = (kind: FindingKind) => kind === 'path_degraded' || kind === 'path_mtu';

/** Where, as a list item names it: `*worker-3* \`10.0.0.3:8080\``, `*a* → *b* \`…\``, the mesh. */
function where(a: Alert, kind: FindingKind): string {
  if (kind === 'partition') return 'the mesh';
  const node = `*${fit(a.peer.node_name, 120)}* \`${fit(a.peer.address, 60)}\``;
  if (!isPath(kind)) return node;
  return `*${fit(nodeNameOf(a.path?.from ?? a.coordinator.id), 120)}* → ${node}`;
}

/** One finding's change as a list item under its section's title (which says what it is). */
export function findingItem(c: AlertChange, kind: FindingKind, at: number, since: string): string {
  const a = c.alert;
  if (c.type === 'resolved') {
    const state = findingState(kind, 'resolved');
    const what = kind === 'egress_broken' ? `egress ${state}` : state;
    return `• ${where(a, kind)} ${what} after ${duration(endOf(a, at) - a.startsAt)}`;
  }
  const facts = factsText(a.facts, LISTED);
  if (kind === 'partition') return `• ${facts ? fit(facts, 2500) : 'the mesh'}${since}`;
  return `• ${where(a, kind)}${since}${facts ? ` — ${fit(facts, 1500)}` : ''}`;
}

/** A finding in the plain words of the fallback text. */
export function findingFallback(c: AlertChange, kind: FindingKind, at: number): string {
  const a = c.alert;
  const since = utc(a.startsAt, at);
  if (c.type === 'firing') return findingSentence(a, kind, 'firing', { since, max: LISTED });
  const after = duration(endOf(a, at) - a.startsAt);
  const sentence = findingSentence(a, kind, 'resolved', { after, max: LISTED });
  return `${sentence} (${findingState(kind, 'firing')} since ${since})`;
}

/** A finding as a group's fallback text names it in its section. */
export function findingName(a: Alert, kind: FindingKind): string {
  if (kind === 'partition')
    return a.facts?.partition ? sidesText(a.facts.partition.sides, 5) : 'the mesh';
  return isPath(kind)
    ? `${nodeNameOf(a.path?.from ?? a.coordinator.id)} → ${a.peer.node_name}`
    : a.peer.node_name;
}

/** The sentence of a single-alert message: what, where, since when, its figures; a warning. */
export function findingMessage(c: AlertChange, kind: FindingKind, at: number): string {
  const a = c.alert;
  const since = slackDate(a.startsAt, at);
  const words = slackWords(1500);
  if (c.type === 'resolved') {
    const after = duration(endOf(a, at) - a.startsAt);
    const sentence = findingSentence(a, kind, 'resolved', { after, words, max: LISTED });
    return `${capitalized(sentence)} (${findingState(kind, 'firing')} since ${since}).`;
  }
  const sentence = findingSentence(a, kind, 'firing', { since, words, max: LISTED });
  const who = kind === 'partition' || isPath(kind) ? 'the nodes still answer' : 'it still answers';
  return `${capitalized(sentence)}.\n_A warning: ${who}; no node is down._`;
}

/** The facts of a firing finding as fields. */
function factFields(a: Alert): Mrkdwn[] {
  const f = a.facts;
  if (f?.figures)
    return [field('Loss', lossText(f.figures)), field('Latency', latencyText(f.figures))];
  if (f?.mtu)
    return [field('Dropped size', `${f.mtu.size} bytes of payload; smaller packets pass`)];
  if (f?.egress) {
    const { reaches, reached_by } = f.egress;
    return [
      field('Reaches', fit(someOf(reaches, LISTED), 1500) || 'no other node'),
      field('Reached by', fit(someOf(reached_by, LISTED), 1500) || 'no node'),
    ];
  }
  if (f?.partition) return [field('Sides', fit(sidesText(f.partition.sides, LISTED), 1900))];
  if (f?.auth) return [field('Refused', fit(authText(f.auth), 1900))];
  return [];
}

/** A single finding's fields: where, since when, who saw it, how urgent, and its facts. */
export function findingFields(c: AlertChange, kind: FindingKind, at: number): Mrkdwn[] {
  const a = c.alert;
  const fields: Mrkdwn[] = [];
  if (isPath(kind)) {
    const from = nodeNameOf(a.path?.from ?? a.coordinator.id);
    fields.push(field('Path', `${fit(from, 900)} → ${fit(a.peer.node_name, 900)}`));
  } else if (kind !== 'partition') {
    fields.push(field('Node', fit(a.peer.node_name, 1000)));
  }
  if (kind !== 'partition') fields.push(podField(a));
  fields.push(field(c.type === 'firing' ? 'Since' : 'Began', slackDate(a.startsAt, at)));
  fields.push(field('Coordinator', fit(coordinatorOf(a), 1000)));
  fields.push(field('Severity', 'warning: no node is down'));
  if (c.type === 'firing') return [...fields, ...factFields(a)];
  fields.push(field('Ended', slackDate(endOf(a, at), at)));
  fields.push(field('Lasted', duration(endOf(a, at) - a.startsAt)));
  return fields;
}
