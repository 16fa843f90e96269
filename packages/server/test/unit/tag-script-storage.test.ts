import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';

// The tag script's localStorage copy of what is not yet acknowledged (issue 52), run in a bare
// context: what an earlier page left is sent again with its ids, within the bounds, and only where
// consent allows storage.
const SOURCE = readFileSync(new URL('../../src/transport/collector/script/tag.js', import.meta.url), 'utf8');
const TAG = 'TAG';
const KEY = `ptag:${TAG}`;

interface Event {
  id: string;
  event_name: string;
  event_time: string;
  data: unknown;
  c?: string;
}

/** Runs the script on a page with `stored` in its localStorage; the collector answers `status` (or never). */
async function page(options: {
  stored?: Event[];
  consent?: { mode: string; gpc: boolean; cookieless: boolean };
  status?: number;
}) {
  const local = new Map<string, string>();
  if (options.stored) local.set(KEY, JSON.stringify(options.stored));
  const writes: string[] = [];
  const bodies: { events: Event[]; consent?: string }[] = [];
  let n = 0;
  const fetch = (_: string, init: { body: string }) => {
    bodies.push(JSON.parse(init.body));
    if (options.status === undefined) return new Promise(() => {});
    return Promise.resolve({ status: options.status, headers: { get: () => null } });
  };
  const storage = (map: Map<string, string>) => ({
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => {
      writes.push(k);
      map.set(k, v);
    },
    removeItem: (k: string) => map.delete(k),
  });
  const consent = JSON.stringify(options.consent ?? { mode: 'none', gpc: true, cookieless: false });
  runInNewContext(SOURCE.replace('__TAG_ID__', TAG).replace('__TAG_CONSENT__', consent), {
    window: { crypto: { randomUUID: () => `new-${n++}` }, fetch, addEventListener: () => {} },
    document: {
      currentScript: { src: 'https://collect.shop.example/t/TAG.js' },
      referrer: '',
      title: 'Page',
      visibilityState: 'visible',
      addEventListener: () => {},
      querySelector: () => null,
    },
    fetch,
    location: { href: 'https://shop.example/p', protocol: 'https:', pathname: '/p', search: '' },
    navigator: { sendBeacon: () => false },
    localStorage: storage(local),
    sessionStorage: storage(new Map()),
    crypto: { randomUUID: () => `new-${n++}` },
    setTimeout: (fn: () => void) => setTimeout(fn, 0),
    clearTimeout,
    URL,
  });
  for (let i = 0; i < 50 && bodies.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 20));
  const kept = () => JSON.parse(local.get(KEY) ?? '[]') as Event[];
  return { bodies, kept, writes };
}

const event = (i: number, data: unknown = {}, ago = 60_000): Event => ({
  id: `old-${i}`,
  event_name: 'Old',
  event_time: new Date(Date.now() - ago).toISOString(),
  data,
});

describe('tag script: the stored copy of unacknowledged events', () => {
  it("sends an earlier page's events again, with their ids and times, in its first batch, and forgets them once accepted", async () => {
    const stored = [event(1), event(2)];
    const { bodies, kept } = await page({ stored, status: 202 });
    const sent = bodies[0]!.events;
    expect(sent.map((e) => e.id)).toEqual(['old-1', 'old-2', 'new-0']);
    expect(sent.slice(0, 2)).toEqual(stored);
    expect(sent[2]).toMatchObject({ event_name: 'PageView', data: { path: '/p' } });
    expect(kept()).toEqual([]);
  });

  it('keeps what is not acknowledged, at most 1000 events, the oldest dropped first', async () => {
    const stored = Array.from({ length: 1100 }, (_, i) => event(i));
    const { kept } = await page({ stored });
    const ids = kept().map((e) => e.id);
    expect(ids).toHaveLength(1000);
    expect(ids[0]).toBe('old-101');
    expect(ids.at(-1)).toBe('new-0');
  });

  it('keeps at most 500,000 characters, the oldest dropped first', async () => {
    const stored = Array.from({ length: 700 }, (_, i) => event(i, { text: 'x'.repeat(1000) }));
    const { kept } = await page({ stored });
    const list = kept();
    expect(JSON.stringify(list).length).toBeLessThanOrEqual(500_000);
    expect(JSON.stringify(list).length).toBeGreaterThan(495_000);
    expect(list.at(-1)?.id).toBe('new-0');
    expect(list[0]?.id).toBe(`old-${700 - list.length + 1}`);
  });

  it('neither sends nor keeps an event more than a day old', async () => {
    const { bodies, kept } = await page({ stored: [event(1, {}, 86_400_000 + 60_000), event(2)] });
    expect(bodies[0]!.events.map((e) => e.id)).toEqual(['old-2', 'new-0']);
    expect(kept().map((e) => e.id)).toEqual(['old-2', 'new-0']);
  });

  it('sends events stored under another consent state in a batch of their own, under that state', async () => {
    const consent = { mode: 'opt-out', gpc: true, cookieless: false };
    const { bodies } = await page({ consent, stored: [{ ...event(1), c: 'granted' }], status: 202 });
    expect(bodies.map((b) => [b.consent, b.events.map((e) => e.id)])).toEqual([
      ['granted', ['old-1']],
      ['implied', ['new-0']],
    ]);
  });

  it('stores nothing without consent to storage: cookieless, and opt-in before an answer', async () => {
    for (const consent of [
      { mode: 'none', gpc: true, cookieless: true },
      { mode: 'opt-in', gpc: true, cookieless: true },
      { mode: 'opt-in', gpc: true, cookieless: false },
    ]) {
      const { writes } = await page({ consent });
      expect(writes).toEqual([]);
    }
    // A copy left from before (the tag's mode changed since) is not sent under a state it was not collected in.
    const { bodies, kept } = await page({
      consent: { mode: 'none', gpc: true, cookieless: true },
      stored: [event(1)],
      status: 202,
    });
    expect(bodies.flatMap((b) => b.events.map((e) => e.id))).toEqual(['new-0']);
    expect(kept()).toEqual([]);
  });
});
