import { existsSync } from 'node:fs';
import path from 'node:path';
import { causes } from './errors.js';

/** A failure to start that an operator fixes by configuration. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** A connection URL with its password masked: `postgres://app:****@db:5432/tags`. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:****@');
  }
}

/** The first `code` in an error's cause chain (ECONNREFUSED, 3D000, CONNECT_TIMEOUT...). */
export function errorCode(error: unknown): string {
  for (const e of causes(error)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    if (typeof code === 'number') return String(code);
  }
  return 'unknown error';
}

/** Listening on a port failed: in use, not allowed, or an address this machine does not have. */
export function listenError(error: NodeJS.ErrnoException, port: number, host: string, setting: string): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new StartupError(`${setting} ${port} is in use: stop the other process or set ${setting}`, {
        cause: error,
      });
    case 'EACCES':
      return new StartupError(
        `${setting} ${port} is not allowed for this user (EACCES): use a port above 1023 or set ${setting}`,
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
      return new StartupError(
        `HOST ${host} is not an address of this machine (EADDRNOTAVAIL): set HOST (0.0.0.0 for every interface)`,
        { cause: error },
      );
    default:
      return new StartupError(`Cannot listen on ${setting} ${port} (${errorCode(error)}): set ${setting}`, {
        cause: error,
      });
  }
}

/** PostgreSQL could not be opened at start: unreachable, missing, refusing the login. */
export function databaseStartupError(error: unknown, url: string): StartupError {
  const code = errorCode(error);
  const where = `DATABASE_URL=${maskUrl(url)}`;
  let database = '';
  try {
    database = decodeURIComponent(new URL(url).pathname.slice(1));
  } catch {}
  switch (code) {
    case '3D000':
      return new StartupError(
        `The database "${database}" does not exist at ${where} (3D000): create it (createdb ${database}) or fix DATABASE_URL`,
        { cause: error },
      );
    case '28P01':
    case '28000':
      return new StartupError(
        `PostgreSQL refused the login at ${where} (${code}): fix the user or password in DATABASE_URL`,
        { cause: error },
      );
    default:
      return new StartupError(
        `Cannot reach the database at ${where} (${code}): start PostgreSQL there or fix DATABASE_URL`,
        { cause: error },
      );
  }
}

/** The embedded store could not be opened in DATA_DIR. */
export function embeddedStartupError(error: unknown, dataDir: string): StartupError {
  return new StartupError(
    `Cannot open the embedded database in DATA_DIR=${dataDir} (${errorCode(error)}): make the directory writable, or set DATA_DIR or DATABASE_URL`,
    { cause: error },
  );
}

/** The statistics' ClickHouse could not be opened: chDB's directory held by another process, or a server out of reach. */
export function statsStartupError(
  error: unknown,
  engine: { kind: 'chdb'; path: string } | { kind: 'server'; url: string },
): StartupError {
  const code = errorCode(error);
  if (engine.kind === 'server') {
    return new StartupError(
      `Cannot reach the statistics' ClickHouse at CLICKHOUSE_URL=${maskUrl(engine.url)} (${code}): start it there or fix CLICKHOUSE_URL`,
      { cause: error },
    );
  }
  // chDB names the lock only on its own stderr (its error says `Failed to create connection`); the
  // `status` file it writes in the directory is there while a process has it open.
  const locked =
    causes(error).some((e) => /already running|Cannot lock file/i.test(String((e as Error)?.message))) ||
    (code === 'CHDB_CONNECTION' && existsSync(path.join(engine.path, 'status')));
  return new StartupError(
    locked
      ? `The statistics in ${engine.path} are open in another process: stop it, set DATA_DIR, or give several processes one ClickHouse with CLICKHOUSE_URL`
      : `Cannot open the statistics in ${engine.path} (${code}): make DATA_DIR writable, or set CLICKHOUSE_URL`,
    { cause: error },
  );
}
