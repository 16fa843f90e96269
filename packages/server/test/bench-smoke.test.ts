import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A tiny run of `pnpm bench` (bench/run.ts): it needs real PostgreSQL, so it runs only with
// TEST_DATABASE_URL. The figures of so small a run mean nothing; this checks that the script runs
// end to end and writes its table and JSON. Real runs: `pnpm bench` (see bench/README.md).
const databaseUrl = process.env.TEST_DATABASE_URL;
const BENCH_DIR = fileURLToPath(new URL('../../../bench/', import.meta.url));

describe.skipIf(!databaseUrl)('pnpm bench (smoke run)', () => {
  const name = `bench_smoke_${randomBytes(4).toString('hex')}`;
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-smoke-'));
  let admin: postgres.Sql;

  beforeAll(async () => {
    admin = postgres(databaseUrl as string, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
  });
  afterAll(async () => {
    await admin?.unsafe(`drop database if exists ${name} with (force)`);
    await admin?.end({ timeout: 5 });
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  it('seeds, measures every part and writes the markdown table and the JSON', { timeout: 120_000 }, async () => {
    const url = new URL(databaseUrl as string);
    url.pathname = `/${name}`;
    const args = ['--import', 'tsx', 'run.ts', '--events', '3000', '--reps', '3', '--duration', '1'];
    const child = spawn(process.execPath, [...args, '--ingest', '1000', '--merchants', '3', '--out', outDir], {
      cwd: BENCH_DIR,
      env: { ...process.env, BENCH_DATABASE_URL: url.toString() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr).toBe(0);

    const files = fs.readdirSync(outDir);
    const md = files.find((file) => /^bench-.*\.md$/.test(file));
    const json = files.find((file) => /^bench-.*\.json$/.test(file));
    expect(md).toBeDefined();
    expect(json).toBeDefined();
    const table = fs.readFileSync(path.join(outDir, md as string), 'utf8');
    expect(stdout).toBe(table);
    for (const heading of [
      '## 1. GET /v1/partners/events',
      '## 2. Growth',
      '## 3. GET /v1/partners/merchant',
      '## 4. Ingestion',
      '## 5. The driver under sustained load',
    ]) {
      expect(table).toContain(heading);
    }
    for (const shape of ['page 1, limit 100', 'PageView,Purchase + 30-day range', 'sortBy=event_name', 'page 1000']) {
      expect(table).toContain(`| ${shape}`);
    }
    const results = JSON.parse(fs.readFileSync(path.join(outDir, json as string), 'utf8'));
    expect(results.eventList.large).toHaveLength(4);
    expect(results.eventList.eventsAtLarge).toBe(3000);
    for (const shape of results.eventList.large) expect(shape.ratio).toBeGreaterThan(0);
    expect(results.merchantList.apiRps).toBeGreaterThan(0);
    expect(results.merchantList.bareRps).toBeGreaterThan(0);
    expect(results.ingestion.rawPerSecond).toBeGreaterThan(0);
    expect(results.sustained.windows).toHaveLength(4);
    for (const qps of results.sustained.windows) expect(qps).toBeGreaterThan(0);
    expect(stderr).toContain('seed (small) [');
  });
});
