import { execFile } from 'node:child_process';
import { knownTimeZoneCount } from '@partner/shared-schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedZones } from '../../src/features/stats/zone.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';

/**
 * Issue 51, finding 3: every capitalisation of a zone name kept a new `Intl.DateTimeFormat` for
 * the life of the process (features/stats/zone.ts, keyed by the zone as sent), 105 -> 262 MiB over
 * 4,000 reads, and the zone was echoed as sent. The schemas now answer and use the zone's
 * canonical name, and every cache keyed by it is bounded by the runtime's zones.
 */
let server: TestServer;
let tag: GeneratedTag;

beforeAll(async () => {
  server = await startTestServer();
  tag = await preverifiedTag(server);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

/** The `n` spellings of `zone` after the first `from`, by the case of each of its letters. */
function spellings(zone: string, n: number, from = 0): string[] {
  const letters = [...zone].flatMap((c, i) => (/[a-z]/i.test(c) ? [i] : []));
  return Array.from({ length: n }, (_, k) =>
    [...zone]
      .map((c, i) => {
        const bit = letters.indexOf(i);
        if (bit < 0 || !(((from + k) >> bit) & 1)) return c;
        return c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
      })
      .join(''),
  );
}

const canonical = (zone: string) => new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;

describe('a zone is answered under its canonical name', () => {
  it('200 case variants through the REST and tRPC stats endpoints answer America/New_York', async () => {
    const client = api(server, server.partner.apiKey);
    const query = (timezone: string) => ({
      merchantId: tag.merchantId,
      startDate: '2026-03-01',
      endDate: '2026-03-09',
      timezone,
    });
    const variants = spellings('America/New_York', 200, 1);
    for (const [i, timezone] of variants.entries()) {
      const kind = ['summary', 'timeseries', 'breakdown'][i % 3]!;
      const params = new URLSearchParams({
        ...query(timezone),
        ...(kind === 'breakdown' ? { dimension: 'path' } : {}),
      });
      const res =
        i % 2 === 0
          ? await client.get(`/v1/partners/stats/${kind}?${params}`)
          : await client.get(
              `/trpc/stats.${kind}?input=${encodeURIComponent(JSON.stringify(Object.fromEntries(params)))}`,
            );
      expect(res.status).toBe(200);
      const body = i % 2 === 0 ? res.body : res.body.result.data;
      expect(body.range.timezone).toBe('America/New_York');
      if (kind === 'timeseries') expect(body.points[0].start).toBe('2026-03-01T00:00:00-05:00');
    }
    // The server's caches (this process's modules): one zone, whatever its spellings.
    expect([knownTimeZoneCount(), cachedZones()]).toEqual([1, { formats: 1, offsets: 1 }]);
  });

  it('aliases answer the runtime’s canonical name; a name that is no zone is a 400 naming timezone', async () => {
    const client = api(server, server.partner.apiKey);
    for (const timezone of ['utc', 'Etc/UTC', 'us/eastern', 'ASIA/KOLKATA', 'europe/paris']) {
      const params = new URLSearchParams({
        merchantId: tag.merchantId,
        startDate: '2026-03-01',
        endDate: '2026-03-01',
        timezone,
      });
      const res = await client.get(`/v1/partners/stats/summary?${params}`);
      expect([res.status, res.body.range?.timezone]).toEqual([200, canonical(timezone)]);
    }
    for (const timezone of ['America/New_Yorkk', 'Asia/\u212Aolkata', '']) {
      const params = new URLSearchParams({
        merchantId: tag.merchantId,
        startDate: '2026-03-01',
        endDate: '2026-03-01',
        timezone,
      });
      const res = await client.get(`/v1/partners/stats/summary?${params}`);
      expect([res.status, res.body]).toEqual([
        400,
        { message: expect.stringContaining('timezone: timezone must be an IANA time zone'), code: 'VALIDATION_ERROR' },
      ]);
    }
  });
});

/**
 * 4,000 spellings of three zones (none sent twice) through what a stats read does with its zone (the schema, the
 * range and the points' offsets), in a child process with `--expose-gc`: the resident memory after
 * a collection, before and after them.
 */
const CHILD = `
const { StatsTimeseriesQuery, knownTimeZoneCount } = await import('@partner/shared-schemas');
const { statsRange, pointStarts } = await import('./src/features/stats/range.ts');
const { isoInZone, cachedZones } = await import('./src/features/stats/zone.ts');
const spellings = ${spellings.toString()};
const read = (timezone) => {
  const q = StatsTimeseriesQuery.parse({ merchantId: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c', startDate: '2026-03-01', endDate: '2026-03-31', timezone });
  const range = statsRange(q.startDate, q.endDate, q.timezone);
  for (const start of pointStarts(range, q.interval)) isoInZone(q.timezone, start);
  return q.timezone;
};
const rss = async () => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (let i = 0; i < 3; i++) globalThis.gc();
  return process.memoryUsage().rss;
};
const zones = { 'America/New_York': 2000, 'Europe/Paris': 1000, 'Asia/Kolkata': 1000 };
for (const zone of Object.keys(zones)) read(zone);
const before = await rss();
const answered = new Set();
for (const [zone, n] of Object.entries(zones)) for (const timezone of spellings(zone, n, 1)) answered.add(read(timezone));
const after = await rss();
const caches = { schema: knownTimeZoneCount?.(), zone: cachedZones?.() };
console.log(JSON.stringify({ beforeMiB: before / 2 ** 20, afterMiB: after / 2 ** 20, answered: [...answered], caches }));
`;

describe('memory over 4,000 zone spellings', () => {
  it('stays flat (each spelling once kept a DateTimeFormat: about 40 KiB each)', async () => {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', CHILD],
        { cwd: new URL('../..', import.meta.url), timeout: 120_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as {
      beforeMiB: number;
      afterMiB: number;
      answered: string[];
      caches: { schema?: number; zone?: { formats: number; offsets: number } };
    };
    console.info(
      `zone-case-variants: RSS ${result.beforeMiB.toFixed(0)} -> ${result.afterMiB.toFixed(0)} MiB over 4,000 spellings`,
    );
    expect(result.answered.sort()).toEqual(['America/New_York', 'Europe/Paris', canonical('Asia/Kolkata')].sort());
    expect(result.afterMiB - result.beforeMiB).toBeLessThan(32);
    // One entry per zone sent, whatever its spellings.
    expect(result.caches).toEqual({ schema: 3, zone: { formats: 3, offsets: 3 } });
  }, 120_000);
});
