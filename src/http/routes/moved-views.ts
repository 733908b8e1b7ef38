// With OPERATOR_LISTEN, the operator's routes on the peer port: a 404 that says where they went, so
// that an operator, a bookmark or a scrape config left on the old port learns where to look.
import { Router } from 'express';

/** Every route of the operator's (what OPERATOR_LISTEN moves), as express paths. */
export const OPERATOR_PATHS: readonly string[] = [
  '/',
  '/status',
  '/metrics',
  '/maintenance',
  '/maintenance/:id',
  '/test-alert',
];

/**
 * `where`: the listener as an operator reaches it, e.g. "port 9090" or "127.0.0.1:9090 (loopback
 * only: reach it with kubectl port-forward)".
 */
export function movedViewsRouter(where: string): Router {
  const router = Router();
  router.all([...OPERATOR_PATHS], (req, res) => {
    res.status(404).json({
      error: `${req.method} ${req.path} is not served on this port: OPERATOR_LISTEN moved the operator's views to ${where}`,
    });
  });
  return router;
}
