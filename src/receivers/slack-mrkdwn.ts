// Slack's text as knh writes it: its limits, escaped and bounded text, dates, durations, fields.
import type { Alert } from '../wire/alert.js';
import { nodeNameOf } from '../wire/node-ref.js';
import type { Words } from './finding-text.js';

/** Slack's documented limits: Block Kit reference; chat.postMessage truncates text past 40,000. */
export const SLACK_LIMITS = {
  text: 40_000,
  blocks: 50,
  sectionText: 3000,
  field: 2000,
  header: 150,
} as const;
/** Alerts a group's message names in each of its sections, and in its text; the rest are counted. */
export const LISTED = 20;

export interface Mrkdwn {
  type: 'mrkdwn';
  text: string;
}

/** Slack's three control characters as entities, so alert text cannot open a link or a mention. */
export function escapeSlack(raw: string): string {
  return raw.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `raw` escaped, cut (ending in …) so the escaped text has at most `max` characters. */
export function fit(raw: string, max: number): string {
  // Escaping only lengthens: a text longer than `max` is cut before it is escaped.
  if (raw.length <= max) {
    const whole = escapeSlack(raw);
    if (whole.length <= max) return whole;
  }
  // Cut the raw text, never an entity; an entity is at most 5 characters for 1, so cutting a
  // fifth of the excess never cuts more than needed.
  let keep = max - 1;
  for (;;) {
    if (keep > 0 && /[\uD800-\uDBFF]/.test(raw.charAt(keep - 1))) keep -= 1; // a whole pair
    const cut = `${escapeSlack(raw.slice(0, Math.max(0, keep)))}…`;
    if (cut.length <= max) return cut;
    keep -= Math.max(1, Math.floor((cut.length - max) / 5));
  }
}

/** `12:03:04 UTC`, with the date in front unless it is `now`'s (UTC) day. */
export function utc(ms: number, now: number): string {
  const iso = new Date(ms).toISOString();
  const time = `${iso.slice(11, 19)} UTC`;
  return iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10)
    ? time
    : `${iso.slice(0, 10)} ${time}`;
}

/** Slack shows the time in the reader's zone; other clients show the UTC fallback. */
export const slackDate = (ms: number, now: number) =>
  `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time_secs}|${utc(ms, now)}>`;

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  const h = Math.floor(s / 3600);
  if (h < 24) return `${h} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

export const mrkdwn = (text: string): Mrkdwn => ({ type: 'mrkdwn', text });
export const field = (name: string, value: string) => mrkdwn(`*${name}*\n${value}`);

/** The coordinator by its node, and its pod where known: `worker-9 (pod knh-x2x9z, 10.0.0.9:8080)`. */
export const coordinatorOf = (a: Alert) => {
  const pod = a.coordinator.pod_name ? `pod ${a.coordinator.pod_name}, ` : '';
  return `${nodeNameOf(a.coordinator.id)} (${pod}${a.coordinator.address})`;
};

/** The peer's pod by name and address where discovery names it, else by its address. */
export const podField = (a: Alert) =>
  a.peer.pod_name
    ? field('Pod', `${fit(a.peer.pod_name, 300)} (${fit(a.peer.address, 100)})`)
    : field('Pod address', fit(a.peer.address, 1000));
export const endOf = (a: Alert, at: number) => a.endsAt ?? at;

/** Names in bold and addresses as code, each escaped and bounded; a list within `text` characters. */
export const slackWords = (text: number): Words => ({
  name: (s) => `*${fit(s, 300)}*`,
  address: (s) => `\`${fit(s, 100)}\``,
  text: (s) => fit(s, text),
});
