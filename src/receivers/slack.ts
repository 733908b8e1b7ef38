// Slack incoming-webhook messages: one readable message (text fallback plus Block Kit) per group; pure.
import type { Alert, AlertKind } from '../wire/alert.js';
import type { AlertChange, AlertGroup, ReceiverAdapter } from '../alerts/receiver-adapter.js';
import { nodeNameOf } from '../wire/node-ref.js';
import {
  BY_URGENCY,
  findingCount,
  findingHeadline,
  isFindingKind,
  plural,
  someOf,
  type FindingKind,
} from './finding-text.js';
import {
  findingFallback,
  findingFields,
  findingItem,
  findingMessage,
  findingName,
} from './slack-findings.js';
import {
  coordinatorOf,
  duration,
  endOf,
  field,
  fit,
  LISTED,
  mrkdwn,
  podField,
  slackDate,
  SLACK_LIMITS,
  utc,
  type Mrkdwn,
} from './slack-mrkdwn.js';
import { hintOf } from './hints.js';
import { linksOf, type AlertLinks } from './links.js';

const LISTED_IN_TEXT = 50;

export interface SlackOptions {
  /** The incoming webhook, or where to read it now (SLACK_WEBHOOK_URL_FILE, re-read). */
  webhookUrl: string | (() => string);
  /** Shown in every message, for workspaces that hear from several clusters. */
  clusterName?: string;
  /** Buttons under every message: the status page, the runbook. */
  links?: AlertLinks;
}

interface PlainText {
  type: 'plain_text';
  text: string;
  emoji: true;
}
interface LinkButton {
  type: 'button';
  text: PlainText;
  url: string;
  action_id: string;
}
export type SlackBlock =
  | { type: 'header'; text: PlainText }
  | { type: 'section'; text?: Mrkdwn; fields?: Mrkdwn[] }
  | { type: 'context'; elements: Mrkdwn[] }
  | { type: 'actions'; elements: LinkButton[] };

/** Distinct hints a message shows at most (each is a line): the most urgent sections' first. */
const HINTS_SHOWN = 5;
/** Slack's limit on a button's text. */
const BUTTON_TEXT_MAX = 75;
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/** The sections of KNH's own kinds of alert; a finding's section is its kind and change. */
type OwnSection =
  'unreachable' | 'cannot-judge' | 'broken' | 'recovered' | 'restored' | 'judging-again';
type OwnKind = Exclude<AlertKind, FindingKind>;
type Section = OwnSection | `${FindingKind}:${AlertChange['type']}`;
const FIRING: Record<OwnKind, OwnSection> = {
  peer_dead: 'unreachable',
  cannot_judge: 'cannot-judge',
  path_broken: 'broken',
};
const RESOLVED: Record<OwnKind, OwnSection> = {
  peer_dead: 'recovered',
  cannot_judge: 'judging-again',
  path_broken: 'restored',
};
function sectionFor(kind: AlertKind, type: AlertChange['type']): Section {
  if (isFindingKind(kind)) return `${kind}:${type}`;
  return (type === 'firing' ? FIRING : RESOLVED)[kind];
}
const FINDINGS = BY_URGENCY.filter(isFindingKind);
/** In a message's order: what fires, the most urgent first, then what is resolved. */
const SECTIONS: readonly Section[] = [
  ...BY_URGENCY.map((k) => sectionFor(k, 'firing')),
  ...(['peer_dead', 'path_broken', 'cannot_judge', ...FINDINGS] as const).map((k) =>
    sectionFor(k, 'resolved'),
  ),
];
/**
 * A message's emoji is its most urgent firing section's: a node down is red; a coordinator that
 * cannot judge, a warning sign; paths cut (nodes up), orange; paths that degrade, yellow.
 */
const EMOJI: Partial<Record<Section, string>> = {
  unreachable: ':red_circle:',
  'cannot-judge': ':warning:',
  'partition:firing': ':large_orange_circle:',
  'egress_broken:firing': ':large_orange_circle:',
  broken: ':large_orange_circle:',
  'peer_mtu:firing': ':large_yellow_circle:',
  'path_mtu:firing': ':large_yellow_circle:',
  'peer_degraded:firing': ':large_yellow_circle:',
  'path_degraded:firing': ':large_yellow_circle:',
  'peer_unauthenticated:firing': ':large_yellow_circle:',
};
const sectionOf = (c: AlertChange): Section => sectionFor(c.alert.kind, c.type);
/** Every firing section has an emoji, and only those. */
const isFiring = (s: Section) => EMOJI[s] !== undefined;
/** A finding's kind, if the section is a finding's. */
const findingOf = (s: Section): FindingKind | null => {
  const kind = s.split(':')[0] as AlertKind;
  return s.includes(':') && isFindingKind(kind) ? kind : null;
};
/** A section's title; a coordinator that cannot judge is counted apart from the nodes down. */
function label(s: Section, n: number): string {
  const finding = findingOf(s);
  if (finding) return findingCount(finding, n, s.endsWith(':firing') ? 'firing' : 'resolved');
  switch (s as OwnSection) {
    case 'unreachable':
    case 'recovered':
      return `${plural(n, 'node', 'nodes')} ${s}`;
    case 'broken':
    case 'restored':
      return `${plural(n, 'path', 'paths')} ${s}`;
    case 'cannot-judge':
      return `${plural(n, 'coordinator', 'coordinators')} cannot judge the mesh`;
    case 'judging-again':
      return `${plural(n, 'cannot-judge alert', 'cannot-judge alerts')} resolved`;
  }
}

const witnessesOf = (a: Alert) => {
  const w = a.path?.witnesses.map(nodeNameOf) ?? [];
  if (w.length === 0) return 'other nodes';
  const shown = w.slice(0, LISTED).join(', ');
  return w.length > LISTED ? `${shown} and ${w.length - LISTED} more` : shown;
};
const fromOf = (a: Alert) => nodeNameOf(a.path?.from ?? a.coordinator.id);

/** The lead of knh's cannot_judge sentence (src/alerts/cannot-judge.ts). */
const CANNOT_JUDGE_LEAD = 'knh cannot judge the mesh: ';
/** cannot_judge: its node is the coordinator that cannot judge (alive: not a node down). */
const reachOf = (a: Alert) =>
  a.judgement ? ` reaches ${a.judgement.reaches} of ${a.judgement.peers} peers` : '';

/**
 * cannot_judge firing: knh's sentence, or one from the figures without it. Never used for a
 * resolution: the lifecycle resolves the firing alert itself, whose sentence and figures are then
 * the opening's, not how things are now.
 */
function judgementSentence(a: Alert): string {
  const figures = reachOf(a) || ' cannot reach most of its peers';
  return (
    a.reason ?? `${CANNOT_JUDGE_LEAD}coordinator ${a.peer.node_name} (${a.peer.address})${figures}`
  );
}

/** That sentence without its lead, where the message says it in its own words. */
function judgementDetail(a: Alert): string {
  const whole = judgementSentence(a);
  return whole.startsWith(CANNOT_JUDGE_LEAD) ? whole.slice(CANNOT_JUDGE_LEAD.length) : whole;
}

/** One alert's change as plain text (the fallback's words). */
function describe(c: AlertChange, at: number): string {
  const a = c.alert;
  if (isFindingKind(a.kind)) return findingFallback(c, a.kind, at);
  const where = `${a.peer.node_name} (${a.peer.address})`;
  const since = utc(a.startsAt, at);
  const after = duration(endOf(a, at) - a.startsAt);
  if (a.kind === 'cannot_judge') {
    return c.type === 'firing'
      ? `cannot judge the mesh since ${since}: ${judgementDetail(a)}`
      : `can judge the mesh again after ${after}: coordinator ${where} could not judge it since ${since}`;
  }
  if (a.kind === 'peer_dead') {
    return c.type === 'firing'
      ? `${where} unreachable since ${since}${a.reason ? ` (last failure: ${a.reason})` : ''}`
      : `${where} recovered after ${after} (unreachable since ${since})`;
  }
  const path = `path from ${fromOf(a)} to ${where}`;
  return c.type === 'firing'
    ? `${path} broken since ${since}; reachable from ${witnessesOf(a)}`
    : `${path} restored after ${after} (broken since ${since})`;
}

/**
 * One alert's change as a mrkdwn list item (alert text escaped and bounded); its start is shown
 * when it differs from the section's, `sectionSince`.
 */
function item(c: AlertChange, at: number, sectionSince: number): string {
  const a = c.alert;
  const node = `*${fit(a.peer.node_name, 120)}* \`${fit(a.peer.address, 60)}\``;
  const after = duration(endOf(a, at) - a.startsAt);
  const path = `*${fit(fromOf(a), 120)}* → ${node}`;
  const since =
    Math.floor(a.startsAt / 1000) === Math.floor(sectionSince / 1000)
      ? ''
      : ` since ${slackDate(a.startsAt, at)}`;
  if (isFindingKind(a.kind)) return findingItem(c, a.kind, at, since);
  switch (sectionOf(c) as OwnSection) {
    case 'unreachable':
      return `• ${node}${since}${a.reason ? ` — ${fit(a.reason, 200)}` : ''}`;
    case 'broken':
      return `• ${path}${since}; reachable from ${fit(witnessesOf(a), 300)}`;
    case 'recovered':
      return `• ${node} recovered after ${after}`;
    case 'restored':
      return `• ${path} restored after ${after}`;
    case 'cannot-judge':
      return `• ${node}${since} — ${fit(judgementDetail(a), 1500)}`;
    case 'judging-again':
      return `• ${node} could not judge it for ${after}`;
  }
}

/** One alert's change as the mrkdwn sentence of a single-alert message. */
function sentence(c: AlertChange, at: number): string {
  const a = c.alert;
  if (isFindingKind(a.kind)) return findingMessage(c, a.kind, at);
  const name = `*${fit(a.peer.node_name, 300)}*`;
  const node = `${name} (\`${fit(a.peer.address, 100)}\`)`;
  const since = slackDate(a.startsAt, at);
  const after = duration(endOf(a, at) - a.startsAt);
  const path = `The path from *${fit(fromOf(a), 300)}* to ${node}`;
  switch (sectionOf(c) as OwnSection) {
    case 'unreachable':
      return `${node} is unreachable since ${since}.`;
    case 'broken':
      return `${path} is broken since ${since}; ${name} is reachable from ${fit(witnessesOf(a), 1500)}, so it is up.`;
    case 'recovered':
      return `${node} recovered after ${after} (unreachable since ${since}).`;
    case 'restored':
      return `${path} is restored after ${after} (broken since ${since}).`;
    case 'cannot-judge':
      return `${fit(judgementSentence(a), 2600)}.\n_Since ${since}._`;
    case 'judging-again':
      return `knh can judge the mesh again: coordinator ${node} could not judge it for ${after} (since ${since}).`;
  }
}

const earliest = (cs: readonly AlertChange[]) =>
  cs.reduce((min, c) => Math.min(min, c.alert.startsAt), Number.POSITIVE_INFINITY);

/** The first items joined under a title, until the count or the section's characters run out. */
function list(title: string, total: number, itemAt: (i: number) => string): string {
  const more = (n: number) => `\n_and ${n} more_`;
  let text = title;
  let shown = 0;
  while (shown < Math.min(total, LISTED)) {
    const line = itemAt(shown);
    const reserve = shown + 1 < total ? more(total).length : 0;
    if (text.length + 1 + line.length + reserve > SLACK_LIMITS.sectionText) break;
    text += `\n${line}`;
    shown += 1;
  }
  return shown < total ? text + more(total - shown) : text;
}

/**
 * cannot_judge: the coordinator that cannot judge, whom it does not reach and who confirms it;
 * resolved, for how long and who resolved it (the figures are the opening's: not shown again).
 */
function judgementFields(c: AlertChange, at: number): Mrkdwn[] {
  const a = c.alert;
  const j = a.judgement;
  const fields = [
    field('Coordinator', fit(`${a.peer.node_name} (${a.peer.address})`, 1000)),
    field(c.type === 'firing' ? 'Since' : 'Could not judge since', slackDate(a.startsAt, at)),
  ];
  if (c.type === 'resolved') {
    fields.push(field('Judging again', slackDate(endOf(a, at), at)));
    fields.push(field('Could not judge for', duration(endOf(a, at) - a.startsAt)));
    if (a.coordinator.id !== a.peer.id)
      fields.push(field('Resolved by', fit(coordinatorOf(a), 1000)));
  }
  if (!j || c.type === 'resolved') return fields;
  const silent = j.unreachable.map((p) => p.node_name || p.id);
  const by = j.corroborated_by.map(nodeNameOf);
  fields.push(field('Reaches', `${j.reaches} of ${j.peers} peers`));
  fields.push(
    field('Not answering', fit(someOf(silent, LISTED, j.unreachable_count), 1500) || 'none'),
  );
  fields.push(
    field(
      'Cannot reach them either',
      by.length > 0 ? fit(someOf(by, LISTED), 1500) : 'no peer it reaches could check them',
    ),
  );
  return fields;
}

function singleFields(c: AlertChange, at: number): Mrkdwn[] {
  const a = c.alert;
  if (a.kind === 'cannot_judge') return judgementFields(c, at);
  if (isFindingKind(a.kind)) return findingFields(c, a.kind, at);
  const fields = [
    field('Node', fit(a.peer.node_name, 1000)),
    podField(a),
    field(c.type === 'firing' ? 'Since' : 'Down since', slackDate(a.startsAt, at)),
    field('Coordinator', fit(coordinatorOf(a), 1000)),
  ];
  if (a.reason) fields.push(field('Reason', fit(a.reason, 1000)));
  if (a.kind === 'path_broken') {
    fields.push(field('Path', `${fit(fromOf(a), 900)} → ${fit(a.peer.node_name, 900)}`));
    fields.push(field('Reachable from', fit(witnessesOf(a), 1500)));
  }
  if (c.type === 'resolved') {
    fields.push(field('Recovered', slackDate(endOf(a, at), at)));
    fields.push(field('Down for', duration(endOf(a, at) - a.startsAt)));
  }
  return fields;
}

/** `k1`, `k2` … within one context element. */
function keys(alerts: readonly Alert[]): string {
  const shown: string[] = [];
  let length = 0;
  for (const a of alerts) {
    const k = `\`${fit(a.key, 300)}\``;
    if (shown.length === LISTED || length + k.length + 60 > SLACK_LIMITS.sectionText) break;
    shown.push(k);
    length += k.length + 2;
  }
  const rest = alerts.length - shown.length;
  return `${alerts.length === 1 ? 'Alert' : 'Alerts'} ${shown.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}`;
}

/** The header of a single-alert message. */
function headlineOf(c: AlertChange): string {
  const a = c.alert;
  const firing = c.type === 'firing';
  if (a.kind === 'cannot_judge')
    return firing ? 'knh cannot judge the mesh' : 'knh can judge the mesh again';
  if (isFindingKind(a.kind)) return findingHeadline(a, a.kind, c.type);
  return a.kind === 'peer_dead'
    ? `${a.peer.node_name} ${firing ? 'unreachable' : 'recovered'}`
    : `path ${fromOf(a)} → ${a.peer.node_name} ${firing ? 'broken' : 'restored'}`;
}

/** An alert as a group's fallback text names it in its section. */
function nameOf(s: Section, a: Alert): string {
  if (isFindingKind(a.kind)) return findingName(a, a.kind);
  switch (s as OwnSection) {
    case 'unreachable':
    case 'recovered':
    case 'judging-again':
      return a.peer.node_name;
    case 'cannot-judge':
      return `${a.peer.node_name}${reachOf(a)}`;
    case 'broken':
    case 'restored':
      return `${fromOf(a)} → ${a.peer.node_name}`;
  }
}

/**
 * What to check first about what fires, one line per distinct hint (src/receivers/hints.ts), in
 * the message's order: a single alert's, or a group's most urgent sections' first.
 */
function hintsBlock(changes: readonly AlertChange[]): SlackBlock | null {
  const firing = SECTIONS.flatMap((s) =>
    changes.filter((c) => c.type === 'firing' && sectionOf(c) === s),
  );
  const hints = [...new Set(firing.map((c) => hintOf(c.alert)))].slice(0, HINTS_SHOWN);
  if (hints.length === 0) return null;
  return {
    type: 'context',
    elements: hints.map((h) => mrkdwn(`:mag: *What to check:* ${fit(h, 1000)}`)),
  };
}

/** Buttons to the status page and the runbook, when set. */
function linksBlock(links: AlertLinks, changes: readonly AlertChange[]): SlackBlock | null {
  const buttons = linksOf(
    links,
    changes.map((c) => c.alert),
  ).map(({ href, text }, i) => ({
    type: 'button' as const,
    text: {
      type: 'plain_text' as const,
      text: text.slice(0, BUTTON_TEXT_MAX),
      emoji: true as const,
    },
    url: href,
    action_id: `knh-link-${i}`,
  }));
  return buttons.length === 0 ? null : { type: 'actions', elements: buttons };
}

export function slackMessage(
  group: AlertGroup,
  { clusterName, links = {} }: { clusterName?: string; links?: AlertLinks } = {},
) {
  const { at, changes, test } = group;
  const by = new Map<Section, AlertChange[]>(SECTIONS.map((s) => [s, []]));
  for (const c of changes) by.get(sectionOf(c))?.push(c);
  const present = SECTIONS.filter((s) => (by.get(s) ?? []).length > 0);
  const urgent = present.map((s) => EMOJI[s]).find((e) => e !== undefined);
  const emoji = test ? ':test_tube:' : (urgent ?? ':large_green_circle:');
  const cluster = clusterName ? ` (${clusterName})` : '';
  const prefix = `${emoji} ${test ? '[TEST] ' : ''}knh${cluster}: `;
  const testNote = test ? ' — a test alert, not a real problem' : '';
  const coordinators = [...new Set(changes.map((c) => coordinatorOf(c.alert)))];
  const seenBy = `seen by ${coordinators.length === 1 ? 'coordinator' : 'coordinators'} ${coordinators.slice(0, 5).join(', ')}`;
  const blocks: SlackBlock[] = [];
  let text: string;
  let headline: string;

  const single = changes.length === 1 ? changes[0] : undefined;
  if (changes.length === 0) {
    headline = 'test alert';
    text = `${prefix}test alert: this receiver works; nothing is wrong`;
  } else if (single) {
    headline = headlineOf(single);
    text = `${prefix}${describe(single, at)} — ${seenBy}${testNote}`;
  } else {
    headline = present.map((s) => label(s, by.get(s)?.length ?? 0)).join(', ');
    const lines = present.map((s) => {
      const cs = by.get(s) ?? [];
      const since = isFiring(s) ? ` since ${utc(earliest(cs), at)}` : '';
      const names = cs.slice(0, LISTED_IN_TEXT).map((c) => nameOf(s, c.alert));
      const more = cs.length > LISTED_IN_TEXT ? ` and ${cs.length - LISTED_IN_TEXT} more` : '';
      return `${label(s, cs.length)}${since}: ${names.join(', ')}${more}`;
    });
    text =
      lines.length === 1
        ? `${prefix}${lines[0]} — ${seenBy}${testNote}`
        : `${prefix}${headline}${testNote}\n${lines.join('\n')}\n${seenBy}`;
  }

  blocks.push({
    type: 'header',
    text: {
      type: 'plain_text',
      text: fit(
        `${emoji} ${test ? '[TEST] ' : ''}${clusterName ? `${clusterName}: ` : ''}${headline}`,
        SLACK_LIMITS.header,
      ),
      emoji: true,
    },
  });
  if (test) {
    blocks.push({
      type: 'section',
      text: mrkdwn(
        ':test_tube: *Test alert* from knh (POST /test-alert) to check this receiver: nothing is wrong.',
      ),
    });
  }
  if (single) {
    blocks.push({
      type: 'section',
      text: mrkdwn(sentence(single, at)),
      fields: singleFields(single, at),
    });
  } else if (changes.length > 0) {
    for (const s of present) {
      const cs = by.get(s) ?? [];
      const since = earliest(cs);
      const title = `*${label(s, cs.length)}*${isFiring(s) ? ` since ${slackDate(since, at)}` : ''}`;
      const itemAt = (i: number) => (cs[i] ? item(cs[i], at, since) : '');
      blocks.push({ type: 'section', text: mrkdwn(list(title, cs.length, itemAt)) });
    }
    blocks.push({
      type: 'section',
      fields: [
        field(
          coordinators.length === 1 ? 'Coordinator' : 'Coordinators',
          fit(coordinators.slice(0, 5).join(', '), 1000),
        ),
        field(
          present.some(isFiring) ? 'Since' : present.every(findingOf) ? 'Began' : 'Down since',
          slackDate(earliest(changes), at),
        ),
      ],
    });
  }
  const hints = hintsBlock(changes);
  if (hints) blocks.push(hints);
  const firingNow = group.firing.length;
  const context = [
    mrkdwn(
      firingNow === 0
        ? 'No alert firing now'
        : `${plural(firingNow, 'alert', 'alerts')} firing now`,
    ),
  ];
  if (changes.length > 0) context.unshift(mrkdwn(keys(changes.map((c) => c.alert))));
  blocks.push({ type: 'context', elements: context });
  const buttons = linksBlock(links, changes);
  if (buttons) blocks.push(buttons);
  return { text: fit(text, SLACK_LIMITS.text), blocks } satisfies SlackMessage;
}

export function slackAdapter({ webhookUrl, clusterName, links }: SlackOptions): ReceiverAdapter {
  const urlNow = typeof webhookUrl === 'function' ? webhookUrl : () => webhookUrl;
  const options = { ...(clusterName ? { clusterName } : {}), ...(links ? { links } : {}) };
  return {
    name: 'slack',
    schema: 'slack-message',
    render(group) {
      if (group.changes.length === 0 && !group.test) return [];
      return [{ url: urlNow(), body: slackMessage(group, options), key: group.key }];
    },
  };
}
