// The event subscription's state machine (features/events/stream/subscription.ts) on a real database:
// pending -> catching-up -> live -> ended, through the app's own stream hub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSubscription } from '../src/features/events/stream/subscription.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { collectOk, preverifiedTag, type SentEvent } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const batch = (prefix: string, n: number): SentEvent[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, event_name: 'PageView', data: { i } }));

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('EventSubscription state', () => {
  it('starts pending and ignores notifications until its position is fixed', async () => {
    const tag = await preverifiedTag(server);
    const subscription = new EventSubscription(server.app.deps.db, tag.merchantId, [], 10, () => {});
    expect(subscription.current).toBe('pending');
    expect(subscription.isStarted).toBe(false);
    subscription.notify(5);
    expect(subscription.current).toBe('pending');
    subscription.close();
    expect(subscription.current).toBe('ended');
    // A start after the end does not revive it.
    await subscription.start(undefined);
    expect(subscription.current).toBe('ended');
    expect(await subscription.next()).toBeNull();
  });

  it('catches up from a resume position page by page, then goes live', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, batch('old', 12));
    const subscription = await server.app.deps.streams.subscribe({
      merchantId: tag.merchantId,
      names: [],
      afterSeq: 0,
    });
    expect(subscription.current).toBe('catching-up');
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) seen.push((await subscription.next())?.id ?? 'none');
    expect(seen).toEqual(batch('old', 12).map((e) => e.id));
    await until(() => subscription.current === 'live', 'live');
    await collectOk(server, tag.tagId, batch('new', 2));
    expect((await subscription.next())?.id).toBe('new-0');
    expect((await subscription.next())?.id).toBe('new-1');
    subscription.close();
    expect(subscription.current).toBe('ended');
    expect(await subscription.next()).toBeNull();
  });

  it('is live at once without a resume position and delivers only newer events', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, batch('before', 3));
    const subscription = await server.app.deps.streams.subscribe({ merchantId: tag.merchantId, names: [] });
    expect(subscription.current).toBe('live');
    await collectOk(server, tag.tagId, batch('after', 1));
    expect((await subscription.next())?.id).toBe('after-0');
    subscription.close();
  });

  it('ends with STREAM_CONSUMER_TOO_SLOW when the live buffer overflows, and throws it once', async () => {
    const tag = await preverifiedTag(server);
    let ended = 0;
    const subscription = new EventSubscription(server.app.deps.db, tag.merchantId, [], 5, () => {
      ended += 1;
    });
    await subscription.start(undefined);
    expect(subscription.current).toBe('live');
    await collectOk(server, tag.tagId, batch('flood', 8));
    subscription.notify(); // what the hub does on the commit's notification
    await until(() => subscription.current === 'ended', 'ended');
    expect(ended).toBe(1);
    await expect(subscription.next()).rejects.toMatchObject({ reason: 'STREAM_CONSUMER_TOO_SLOW' });
    expect(await subscription.next()).toBeNull();
  });
});
