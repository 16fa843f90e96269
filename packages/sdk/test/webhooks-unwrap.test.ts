// client.webhooks.unwrap against the reference `standardwebhooks` library, both directions: what
// the library signs, unwrap accepts; and on the same requests (good and tampered) unwrap and the
// library's verify always agree.
import { Tag as TagSchema, WebhookEvent as WebhookEventSchema } from '@partner/shared-schemas';
import { Webhook } from 'standardwebhooks';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { PartnerClient, type Tag, unwrapWebhook, type WebhookEvent, WebhookVerificationError } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_dGhpcyBpcyBhbm90aGVyIHNlY3JldCBrZXkgMzI=';
const client = new PartnerClient({ apiKey: 'mp_live_test', baseURL: 'http://127.0.0.1:1' });

/** A tag as `GET /v1/partners/tag/{tagId}` returns it right after a successful check. */
const tag: Tag = {
  tagId: '0b9e5c1e-8a8c-4d4a-9a53-1f2b3c4d5e6f',
  merchantId: '5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  livemode: true,
  hostname: 'edge-k3j9x2.shop-example.com',
  domain: 'shop-example.com',
  domainType: 'custom',
  status: 'waiting_for_events',
  isConnected: true,
  isVerified: true,
  record: { type: 'CNAME', name: 'edge-k3j9x2', value: 'q7w2e9r4t6y1.tags.partner-tags.example', ttl: 300 },
  createdAt: '2026-11-23T19:59:00.000Z',
  verifiedAt: '2026-11-23T20:00:00.000Z',
  firstEventAt: null,
  lastEventAt: null,
  lastCheck: { checkedAt: '2026-11-23T20:00:00.000Z', ok: true, found: [] },
  nextCheckAt: '2026-11-24T20:00:00.000Z',
  consentMode: 'none',
  respectGpc: true,
  cookieless: false,
};

const event: WebhookEvent = { type: 'tag.verified', timestamp: '2026-11-23T20:00:00.000Z', livemode: true, data: tag };

function signed(secret = SECRET, body = JSON.stringify(event), at = new Date(), id = 'msg_2b4c') {
  return {
    body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    } as Record<string, string>,
  };
}

const libraryAccepts = (body: string, headers: Record<string, string>, secret: string) => {
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
};

const unwrapAccepts = async (body: string, headers: Record<string, string>, secret: string) => {
  try {
    await client.webhooks.unwrap(body, headers, secret);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return false;
  }
};

describe('client.webhooks.unwrap', () => {
  it('accepts what standardwebhooks signs and returns the typed event', async () => {
    const { body, headers } = signed();
    const unwrapped = await client.webhooks.unwrap(body, headers, SECRET);
    expect(unwrapped).toEqual(event);
    if (unwrapped.type === 'tag.verified') expect(unwrapped.data.tagId).toBe(event.data.tagId);
    // Headers as a fetch Headers object and the body as bytes work too.
    expect(await unwrapWebhook(new TextEncoder().encode(body), new Headers(headers), SECRET)).toEqual(event);
  });

  it('tag.* events carry the full Tag (the shared schema), narrowed by `type`', async () => {
    expect(TagSchema.parse(tag)).toEqual(tag); // the fixture is a valid GET /v1/partners/tag/{tagId} answer
    const activated = {
      type: 'tag.activated',
      timestamp: '2026-11-23T20:01:00.000Z',
      livemode: true,
      data: {
        ...tag,
        status: 'active',
        firstEventAt: '2026-11-23T20:01:00.000Z',
        lastEventAt: '2026-11-23T20:01:00.000Z',
      },
    };
    const { body, headers } = signed(SECRET, JSON.stringify(activated));
    const unwrapped = await client.webhooks.unwrap(body, headers, SECRET);
    expect(WebhookEventSchema.parse(unwrapped)).toEqual(activated);
    if (unwrapped.type !== 'tag.activated') throw new Error(`unexpected ${unwrapped.type}`);
    expectTypeOf(unwrapped.data).toEqualTypeOf<Tag>();
    expect(unwrapped.data.status).toBe('active');
    expect(unwrapped.data.firstEventAt).toBe('2026-11-23T20:01:00.000Z');
    expect(unwrapped.data.record.value).toBe(tag.record.value);
    // A partial tag is not a tag.* event of this API.
    expect(WebhookEventSchema.safeParse({ ...activated, data: { tagId: tag.tagId } }).success).toBe(false);
  });

  it('accepts either of two signatures (secret rotation)', async () => {
    const at = new Date();
    const body = JSON.stringify(event);
    const both = `${new Webhook(OTHER).sign('msg_1', at, body)} ${new Webhook(SECRET).sign('msg_1', at, body)}`;
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': both,
    };
    await expect(client.webhooks.unwrap(body, headers, SECRET)).resolves.toEqual(event);
    await expect(client.webhooks.unwrap(body, headers, OTHER)).resolves.toEqual(event);
    const third = 'whsec_c2VjcmV0IG51bWJlciB0aHJlZSBmb3IgdGhlIHRlc3Q=';
    await expect(client.webhooks.unwrap(body, headers, third)).rejects.toThrow(WebhookVerificationError);
  });

  it('refuses timestamps more than 5 minutes off, either way', async () => {
    const old = signed(SECRET, JSON.stringify(event), new Date(Date.now() - 6 * 60_000));
    await expect(client.webhooks.unwrap(old.body, old.headers, SECRET)).rejects.toThrow(/too old/);
    const future = signed(SECRET, JSON.stringify(event), new Date(Date.now() + 6 * 60_000));
    await expect(client.webhooks.unwrap(future.body, future.headers, SECRET)).rejects.toThrow(/too new/);
    const edge = signed(SECRET, JSON.stringify(event), new Date(Date.now() - 4 * 60_000));
    await expect(client.webhooks.unwrap(edge.body, edge.headers, SECRET)).resolves.toEqual(event);
  });

  it('agrees with the library on good and tampered requests', async () => {
    const good = signed();
    const cases: Array<[string, string, Record<string, string>, string]> = [
      ['good', good.body, good.headers, SECRET],
      ['wrong secret', good.body, good.headers, OTHER],
      ['body changed', good.body.replace('verified', 'activated'), good.headers, SECRET],
      ['body whitespace', `${good.body} `, good.headers, SECRET],
      ['id changed', good.body, { ...good.headers, 'webhook-id': 'msg_other' }, SECRET],
      [
        'timestamp changed',
        good.body,
        { ...good.headers, 'webhook-timestamp': String(Number(good.headers['webhook-timestamp']) - 1) },
        SECRET,
      ],
      [
        'v2 prefix',
        good.body,
        { ...good.headers, 'webhook-signature': good.headers['webhook-signature']!.replace('v1,', 'v2,') },
        SECRET,
      ],
      [
        'signature truncated',
        good.body,
        { ...good.headers, 'webhook-signature': good.headers['webhook-signature']!.slice(0, -4) },
        SECRET,
      ],
      [
        'no signature header',
        good.body,
        { 'webhook-id': 'x', 'webhook-timestamp': good.headers['webhook-timestamp']! },
        SECRET,
      ],
      [
        'stale',
        ...(Object.values(signed(SECRET, good.body, new Date(Date.now() - 3600_000))) as [
          string,
          Record<string, string>,
        ]),
        SECRET,
      ],
    ];
    for (const [name, body, headers, secret] of cases) {
      const expected = libraryAccepts(body, headers, secret);
      expect({ name, accepted: await unwrapAccepts(body, headers, secret) }).toEqual({ name, accepted: expected });
    }
    expect(libraryAccepts(good.body, good.headers, SECRET)).toBe(true);
  });

  it('a signature computed with Web Crypto (as unwrap does) is accepted by the library', async () => {
    const body = JSON.stringify(event);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const key = await crypto.subtle.importKey(
      'raw',
      Uint8Array.from(atob(SECRET.slice(6)), (c) => c.charCodeAt(0)),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const mac = new Uint8Array(
      await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`msg_9.${timestamp}.${body}`)),
    );
    const signature = `v1,${btoa(String.fromCharCode(...mac))}`;
    const headers = { 'webhook-id': 'msg_9', 'webhook-timestamp': timestamp, 'webhook-signature': signature };
    expect(libraryAccepts(body, headers, SECRET)).toBe(true);
    await expect(client.webhooks.unwrap(body, headers, SECRET)).resolves.toEqual(event);
  });

  it('throws WebhookVerificationError for a malformed secret or a body that is not JSON', async () => {
    const { headers } = signed(SECRET, 'not json');
    await expect(client.webhooks.unwrap('not json', headers, SECRET)).rejects.toThrow(/not JSON/);
    await expect(client.webhooks.unwrap('{}', headers, 'whsec_***')).rejects.toThrow(WebhookVerificationError);
  });
});
