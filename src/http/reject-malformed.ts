// The one answer to a request whose body fails its schema: 400 with the errors, a warning logged,
// nothing else done.
import type { Request, Response } from 'express';
import type { Logger } from '../core/logger.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';
import type { WarnThrottle } from '../core/warn-throttle.js';

/** Returns true (and has answered 400) when the body does not match `schema`. */
export function rejectMalformed(
  schemas: SchemaRegistry,
  logger: Logger,
  schema: SchemaName,
  req: Request,
  res: Response,
  /** Rate-limits the warning (a flood of bad requests must not flood the logs). */
  warn?: WarnThrottle,
): boolean {
  const check = schemas.check(schema, req.body);
  if (check.ok) return false;
  const fields = { path: req.path, from: req.ip, errors: check.errors };
  if (warn) warn.warn(`malformed-${req.path}`, fields, 'malformed request rejected');
  else logger.warn(fields, 'malformed request rejected');
  res.status(400).json({ error: `request body does not match ${schema}`, details: check.errors });
  return true;
}
