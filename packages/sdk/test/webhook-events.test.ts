// Webhook payloads as a union discriminated on `type` (issue 35), at run time: one body of every
// event type the server's schemas know, each valid for the server's zod union, signed by the
// `standardwebhooks` library, is returned by `unwrap` as it was sent and reaches its own branch of a
// `switch (event.type)`. The samples are typed by the SDK's `WebhookEventDataMap`, so a type added
// to either side without the other fails here (at compile time or on the list of types).
import { WEBHOOK_EVENT_TYPES, WebhookEvent as WebhookEventSchema } from '@partner/shared-schemas';
import { Webhook } from 'standardwebhooks';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type Erasure,
  type Tag,
  unwrapWebhook,
  type WebhookEvent,
  type WebhookEventDataMap,
  type WebhookEventType,
  type WebhookMerchantDeleted,
  type WebhookStatsDigest,
  type WebhookStatsSpike,
} from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const AT = '2026-11-23T20:00:00.000Z';
const MERCHANT_ID = '5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

const tag = (status: Tag['status']): Tag => ({
  tagId: '0b9e5c1e-8a8c-4d4a-9a53-1f2b3c4d5e6f',
  merchantId: MERCHANT_ID,
  livemode: false,
  hostname: 'edge-k3j9x2.shop-example.com',
  domain: 'shop-example.com',
  domainType: 'custom',
  status,
  isConnected: status !== 'inactive',
  isVerified: true,
  consentMode: 'none',
  respectGpc: false,
  cookieless: false,
  record: { type: 'CNAME', name: 'edge-k3j9x2', value: 'q7w2e9r4t6y1.tags.partner-tags.example', ttl: 300 },
  createdAt: '2026-11-23T19:59:00.000Z',
  verifiedAt: AT,
  firstEventAt: null,
  lastEventAt: null,
  lastCheck: { checkedAt: AT, ok: true, found: [] },
  nextCheckAt: '2026-11-24T20:00:00.000Z',
});

const erasure: Erasure = {
  id: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  muid: 'visitor-1',
  merchantId: MERCHANT_ID,
  suppress: false,
  status: 'completed',
  eventsDeleted: 12,
  createdAt: '2026-11-23T19:58:00.000Z',
  completedAt: AT,
};

const merchantDeleted: WebhookMerchantDeleted = { merchantId: MERCHANT_ID, deletedAt: AT, purgedAt: AT };

const WEEK = { startDate: '2026-11-16', endDate: '2026-11-22', timezone: 'UTC' };
const BEFORE = { startDate: '2026-11-09', endDate: '2026-11-15', timezone: 'UTC' };
const totals = (visitors: number) => ({
  events: visitors * 3,
  visitors,
  pageviews: visitors * 2,
  purchases: 1,
  revenue: [{ currency: 'EUR', amount: '10.00' }],
  visits: visitors,
  bounceRate: 0.5,
  visitDuration: 30,
  viewsPerVisit: 2,
  botEvents: 0,
  goals: [],
});
const breakdown = (dimension: 'path' | 'channel', range: typeof WEEK) => ({
  range,
  dimension,
  rows: [{ value: dimension === 'path' ? '/' : 'Direct', events: 4, visitors: 2, visits: 2 }],
  other: null,
});
const digest: WebhookStatsDigest = {
  merchantId: MERCHANT_ID,
  timezone: 'UTC',
  week: { startDate: WEEK.startDate, endDate: WEEK.endDate },
  summary: { range: WEEK, totals: totals(20), previous: { range: BEFORE, totals: totals(10) } },
  topPages: { current: breakdown('path', WEEK), previous: breakdown('path', BEFORE) },
  channels: { current: breakdown('channel', WEEK), previous: breakdown('channel', BEFORE) },
};
const spike: WebhookStatsSpike = {
  merchantId: MERCHANT_ID,
  timezone: 'UTC',
  hour: { start: '2026-11-23T19:00:00.000Z', end: AT },
  visitors: 60,
  median: 10,
  previousWeeks: [9, 10, 10, 12],
  multiple: 3,
};

/** The `data` of each type: a new type in `WebhookEventDataMap` does not compile until it has one. */
const SAMPLES: { [T in WebhookEventType]: WebhookEventDataMap[T] } = {
  'tag.verified': tag('waiting_for_events'),
  'tag.activated': tag('active'),
  'tag.disconnected': tag('inactive'),
  'tag.reconnected': tag('active'),
  'tag.deleted': tag('active'),
  'merchant.deleted': merchantDeleted,
  'erasure.completed': erasure,
  'stats.digest': digest,
  'stats.spike': spike,
  'webhook.test': { webhookId: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f', message: 'Test event from Partner Tags' },
};

const TYPES = Object.keys(SAMPLES) as WebhookEventType[];
const eventOf = <T extends WebhookEventType>(type: T) =>
  ({ type, timestamp: AT, livemode: false, data: SAMPLES[type] }) as Extract<WebhookEvent, { type: T }>;

/** What a receiver does with each type: the branch taken and a field only that branch's data has. */
function route(event: WebhookEvent): string {
  switch (event.type) {
    case 'tag.verified':
    case 'tag.activated':
    case 'tag.disconnected':
    case 'tag.reconnected':
    case 'tag.deleted':
      return `tag ${event.data.status}`;
    case 'merchant.deleted':
      return `merchant purged ${event.data.purgedAt}`;
    case 'erasure.completed':
      return `erasure ${event.data.eventsDeleted}`;
    case 'stats.digest':
      return `digest ${event.data.week.startDate}`;
    case 'stats.spike':
      return `spike ${event.data.visitors}`;
    case 'webhook.test':
      return `test ${event.data.message}`;
    default: {
      // A type without a branch does not compile.
      const unhandled: never = event;
      throw new Error(`unhandled ${JSON.stringify(unhandled)}`);
    }
  }
}

function signed(body: string, id: string) {
  const at = new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(SECRET).sign(id, at, body),
  };
}

describe('webhook events: one union on `type`, at run time', () => {
  it('the SDK knows exactly the event types of the server’s schemas', () => {
    expect(TYPES).toEqual([...WEBHOOK_EVENT_TYPES]);
  });

  it.each(TYPES)('%s: valid for the server’s schema, unwrapped as sent, routed to its branch', async (type) => {
    const sent = eventOf(type);
    expect(WebhookEventSchema.parse(sent)).toEqual(sent);
    const body = JSON.stringify(sent);
    const event = await unwrapWebhook(body, signed(body, `msg_${type}`), SECRET);
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    expect(event).toEqual(sent);
    const expected: Record<WebhookEventType, string> = {
      'tag.verified': 'tag waiting_for_events',
      'tag.activated': 'tag active',
      'tag.disconnected': 'tag inactive',
      'tag.reconnected': 'tag active',
      'tag.deleted': 'tag active',
      'merchant.deleted': `merchant purged ${AT}`,
      'erasure.completed': 'erasure 12',
      'stats.digest': 'digest 2026-11-16',
      'stats.spike': 'spike 60',
      'webhook.test': 'test Test event from Partner Tags',
    };
    expect(route(event)).toBe(expected[type]);
  });

  it('a body whose data is another type’s is refused by the server’s schema (the union is discriminated)', () => {
    const crossed = { ...eventOf('merchant.deleted'), data: SAMPLES['webhook.test'] };
    expect(WebhookEventSchema.safeParse(crossed).success).toBe(false);
    const unknownType = { ...eventOf('webhook.test'), type: 'tag.renamed' };
    expect(WebhookEventSchema.safeParse(unknownType).success).toBe(false);
  });
});
