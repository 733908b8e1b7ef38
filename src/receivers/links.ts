// The links every alert carries (STATUS_PAGE_URL, RUNBOOK_URL), as each receiver's own link field
// takes them: a URI, the runbook's `{kind}` filled in. Pure.
import { linkHref } from '../config/parse-value.js';
import { BY_URGENCY } from './finding-text.js';
import type { Alert, AlertKind } from '../wire/alert.js';

export interface AlertLinks {
  /** Where people open knh's status page. */
  statusPage?: string;
  /** The runbook; `{kind}` in it stands for the alert's kind. */
  runbook?: string;
}

export const statusPageHref = (links: AlertLinks): string | undefined =>
  links.statusPage === undefined ? undefined : linkHref(links.statusPage);

/** The runbook for one kind of alert; with none (a test alert), `{kind}` is left empty. */
export const runbookHref = (links: AlertLinks, kind?: AlertKind): string | undefined =>
  links.runbook === undefined ? undefined : linkHref(links.runbook, kind ?? '');

/** The most urgent kind among alerts: whose runbook a message about all of them links to. */
export function leadingKind(alerts: readonly Pick<Alert, 'kind'>[]): AlertKind | undefined {
  return BY_URGENCY.find((k) => alerts.some((a) => a.kind === k));
}

/** The links of a message about these alerts, each with the words a button or a link shows. */
export function linksOf(
  links: AlertLinks,
  alerts: readonly Pick<Alert, 'kind'>[],
): { href: string; text: string }[] {
  const page = statusPageHref(links);
  const kind = leadingKind(alerts);
  const runbook = runbookHref(links, kind);
  return [
    ...(page ? [{ href: page, text: 'knh status page' }] : []),
    ...(runbook
      ? [
          {
            href: runbook,
            text: kind && links.runbook?.includes('{kind}') ? `Runbook: ${kind}` : 'Runbook',
          },
        ]
      : []),
  ];
}
