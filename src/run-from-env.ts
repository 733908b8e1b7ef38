// `knh` with no subcommand: settings from the environment, the process's logger and signals.
import { hostname } from 'node:os';
import { effectiveSettings } from './config/effective.js';
import { loadConfig } from './config/load.js';
import { processLogger } from './logging.js';
import { startNode, type RunningNode } from './main.js';

/** `knh` with no subcommand: one node configured from the environment, until SIGTERM/SIGINT. */
export async function runFromEnv(env: NodeJS.ProcessEnv): Promise<number> {
  const loaded = loadConfig(env, { hostname: hostname() });
  if (!loaded.ok) {
    const list = (lines: string[]) => lines.map((e) => `  - ${e}`).join('\n');
    const warned = loaded.warnings.length > 0 ? `\nand:\n${list(loaded.warnings)}` : '';
    process.stderr.write(`knh: invalid settings, not starting:\n${list(loaded.errors)}${warned}\n`);
    return 2;
  }
  const config = loaded.config;
  const { logger, settle } = processLogger(config.logLevel, { node: config.id });
  for (const warning of loaded.warnings) logger.warn({ event: 'settings-warning' }, warning);
  logger.info({ event: 'settings', settings: effectiveSettings(config) }, 'settings in effect');
  let node: RunningNode;
  try {
    node = await startNode(config, { logger });
  } catch (err) {
    logger.fatal({ err }, `cannot start: ${(err as Error).message}`);
    await settle(1_000);
    return 1;
  }
  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info({ signal }, `received ${signal}, shutting down`);
      void node
        .stop(config.shutdownGraceMs)
        .then(() => logger.info({ event: 'stopped' }, 'stopped'))
        .then(() => settle(1_000))
        .then(() => resolve(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
