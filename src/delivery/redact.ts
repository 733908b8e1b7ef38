// What logs may show of an outgoing request: receivers' secrets (a PagerDuty routing key in the
// body, a Slack webhook's token in the URL path) never reach the logs.

/** A body as logs show it: `routing_key` (PagerDuty) masked. */
export function redactBody(body: unknown): unknown {
  if (body && typeof body === 'object' && !Array.isArray(body) && 'routing_key' in body) {
    return { ...body, routing_key: '[redacted]' };
  }
  return body;
}
