// GET /readyz and GET /healthz for the kubelet's probes: 200 or 503, with every check as JSON.
import { Router, type Response } from 'express';
import type { Verdict } from '../../health/checks.js';
import type { HealthReport } from '../../health/health-manager.js';

/** The body of both endpoints; `failing` names the checks that failed, in order. */
export interface HealthBody {
  ok: boolean;
  failing: string[];
  checks: { name: string; ok: boolean; detail: string }[];
}

export function healthRoutes(health: HealthReport): Router {
  const router = Router();
  const answer = (res: Response, verdict: Verdict) => {
    const body: HealthBody = {
      ok: verdict.ok,
      failing: verdict.checks.filter((c) => !c.ok).map((c) => c.name),
      checks: verdict.checks,
    };
    // A probe's answer is about this instant; no cache may replay it.
    res
      .status(verdict.ok ? 200 : 503)
      .set('cache-control', 'no-store')
      .json(body);
  };
  router.get('/readyz', (_req, res) => answer(res, health.readiness()));
  router.get('/healthz', (_req, res) => answer(res, health.liveness()));
  return router;
}
