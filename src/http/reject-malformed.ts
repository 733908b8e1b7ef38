// The one answer to a request whose body fails its schema: 400 with the errors, a warning logged,
// nothing else done.
import type { Request, Response } from 'express';
import type { Logger } from '../core/logger.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';

/** Returns true (and has answered 400) when the body does not match `schema`. */
export function rejectMalformed(
  schemas: SchemaRegistry,
  logger: Logger,
  schema: SchemaName,
  req: Request,
  res: Response,
): boolean {
  const check = schemas.check(schema, req.body);
  if (check.ok) return false;
  logger.warn({ path: req.path, from: req.ip, errors: check.errors }, 'malformed request rejected');
  res.status(400).json({ error: `request body does not match ${schema}`, details: check.errors });
  return true;
}
