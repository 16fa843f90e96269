import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppDeps } from './context.js';
import { type DatabaseHandle, openDatabase } from './db/client.js';
import { type CnameResolver, createCnameResolver } from './dns/cname-resolver.js';
import type { Env } from './env.js';
import { createRequestListener } from './http/server.js';
import { createLogger, type Logger } from './logger.js';

export interface RunningApp {
  server: http.Server;
  url: string;
  deps: AppDeps;
  database: DatabaseHandle;
  /** Stops accepting, finishes in-flight requests (at most `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  dns?: CnameResolver;
  /** An already open database (tests share one); otherwise opened from the env. */
  database?: DatabaseHandle;
}

export function openDatabaseFromEnv(env: Env, owner = "the server"): Promise<DatabaseHandle> {
  return env.DATABASE_URL
    ? openDatabase({ kind: 'postgres', url: env.DATABASE_URL })
    : openDatabase({ kind: 'pglite', dataDir: env.DATA_DIR, lockOwner: owner });
}

export async function startApp(env: Env, options: StartOptions = {}): Promise<RunningApp> {
  const logger = options.logger ?? createLogger(env);
  const database = options.database ?? (await openDatabaseFromEnv(env));
  const dns = options.dns ?? createCnameResolver({ servers: env.DNS_SERVERS, timeoutMs: env.DNS_TIMEOUT_MS });
  const deps: AppDeps = { db: database.db, env, logger, dns };

  const server = http.createServer();
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(env.PORT, env.HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = env.HOST === '0.0.0.0' || env.HOST === '::' ? 'localhost' : env.HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  server.on('request', createRequestListener(deps, database, env.PUBLIC_BASE_URL ?? url));

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000) => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      if (!options.database) await database.close();
    })();
    return closing;
  };
  return { server, url, deps, database, close };
}
