import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';

const SOURCE = readFileSync(new URL('../../src/transport/collector/script/tag.js', import.meta.url), 'utf8');

/** Runs the tag script on a page at `href` and returns the data of the PageView it sends. */
async function pageViewAt(href: string, referrer: string): Promise<Record<string, unknown>> {
  const bodies: string[] = [];
  const url = new URL(href);
  const storage = new Map<string, string>();
  const fetch = (_: string, init: { body: string }) => {
    bodies.push(init.body);
    return Promise.resolve({ status: 202, headers: { get: () => null } });
  };
  const window = { crypto: { randomUUID: () => 'id-1' }, fetch, addEventListener: () => {} };
  const document = {
    currentScript: { src: 'https://collect.shop.example/t/TAG.js' },
    referrer,
    title: 'Page',
    addEventListener: () => {},
    querySelector: () => null,
  };
  // Mode `none` (today's default): the URL rules hold whatever the consent mode; consent has its own tests.
  const consent = JSON.stringify({ mode: 'none', gpc: true, cookieless: false });
  runInNewContext(SOURCE.replace('__TAG_ID__', 'TAG').replace('__TAG_CONSENT__', consent), {
    window,
    document,
    fetch,
    location: { href, protocol: url.protocol, pathname: url.pathname },
    navigator: { sendBeacon: () => false },
    localStorage: { getItem: () => null, setItem: () => {}, removeItem: () => {} },
    sessionStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => storage.set(k, v),
      removeItem: (k: string) => storage.delete(k),
    },
    crypto: { randomUUID: () => 'id-1' },
    setTimeout: (fn: () => void) => setTimeout(fn, 0),
    clearTimeout,
    URL,
    JSON,
    Date,
    Math,
    Number,
    encodeURIComponent,
  });
  for (let i = 0; i < 50 && bodies.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  const events = JSON.parse(bodies[0]!).events as { event_name: string; data: Record<string, unknown> }[];
  return events.find((e) => e.event_name === 'PageView')!.data;
}

describe('tag script: the page view URL', () => {
  it('keeps the five utm_* parameters of the page and nothing else of its query or fragment', async () => {
    const data = await pageViewAt(
      'https://shop.example/p/1?token=s3cret&utm_source=news%20letter&utm_medium=email&id=7&utm_campaign=fall&utm_term=t&utm_content=c#frag',
      'https://ref.example/a?utm_source=x&q=s3cret',
    );
    expect(data).toEqual({
      url: 'https://shop.example/p/1?utm_source=news%20letter&utm_medium=email&utm_campaign=fall&utm_term=t&utm_content=c',
      path: '/p/1',
      referrer: 'https://ref.example/a',
      title: 'Page',
    });
  });

  it('marks an ad click id as present, never keeping its value', async () => {
    const data = await pageViewAt('https://shop.example/l?gclid=Cj0KCQsecret&x=1&fbclid=IwAR0&msclkid=', '');
    // An empty click id is no click id.
    expect(data).toMatchObject({ url: 'https://shop.example/l?gclid=1&fbclid=1' });
  });

  it('records origin and path alone when the page has no utm_* parameter', async () => {
    const data = await pageViewAt('https://shop.example/?reset=s3cret', '');
    expect(data).toMatchObject({ url: 'https://shop.example/', path: '/', referrer: '' });
  });
});
