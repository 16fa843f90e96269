// The machine's services as tests, benches and scripts see them: probes (does PostgreSQL / Redis
// answer?) and throw-away PostgreSQL databases.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import postgres from 'postgres';

const PG_ADMIN_URL = process.env.HARDENING_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.HARDENING_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** True when a TCP connection to host:port opens within `ms`. */
export function tcpAnswers(host: string, port: number, ms = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export const redisAnswers = () => tcpAnswers('127.0.0.1', 6379);
export const postgresAnswers = () => tcpAnswers('127.0.0.1', 5432);

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A throw-away PostgreSQL database for tests that need several processes on one database. */
export async function createScratchDatabase(prefix = 'hardening'): Promise<ScratchDatabase> {
  const admin = new URL(PG_ADMIN_URL);
  if (process.env.TEST_DATABASE_URL) {
    const test = new URL(process.env.TEST_DATABASE_URL);
    admin.host = test.host;
    admin.username = test.username;
    admin.password = test.password;
  }
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const sql = postgres(admin.toString(), { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql.unsafe(`create database ${name}`);
  } finally {
    await sql.end({ timeout: 2 });
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const dropper = postgres(admin.toString(), { max: 1, connect_timeout: 3, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end({ timeout: 2 });
      }
    },
  };
}
