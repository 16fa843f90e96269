// Creates or drops a throw-away PostgreSQL database for CI: `node scripts/ci-database.mjs create|drop <name>`.
// Exit code 3 when no PostgreSQL answers at PGHOST:PGPORT (default 127.0.0.1:5432).
import { createRequire } from 'node:module';

const require = createRequire(new URL('../packages/server/package.json', import.meta.url));
const postgres = require('postgres');

const [action, name] = process.argv.slice(2);
if (!['create', 'drop', 'ping'].includes(action ?? '') || (action !== 'ping' && !/^[a-z0-9_]+$/.test(name ?? ''))) {
  console.error('usage: ci-database.mjs create|drop <name> | ping');
  process.exit(2);
}
const host = process.env.PGHOST ?? '127.0.0.1';
const port = Number(process.env.PGPORT ?? 5432);
const sql = postgres({
  host,
  port,
  user: process.env.PGUSER ?? 'postgres',
  database: 'postgres',
  connect_timeout: 3,
  max: 1,
  onnotice: () => {},
});
try {
  await sql`select 1`;
} catch {
  console.error(`no PostgreSQL answers at ${host}:${port}`);
  process.exit(3);
}
if (action === 'create') await sql.unsafe(`create database ${name}`);
if (action === 'drop') await sql.unsafe(`drop database if exists ${name} with (force)`);
await sql.end();
