import { describe, expectTypeOf, it } from 'vitest';
import {
  type APIError,
  type APIErrorCode,
  type APIPromise,
  type ClientOptions,
  type Erasure,
  type Merchant,
  type MerchantCreateResponse,
  NotFoundError,
  type Page,
  type PagePromise,
  type PaginationInfo,
  PartnerClient,
  type RateLimit,
  RateLimitError,
  type RequestOptions,
  type Tag,
  type TagGenerateResponse,
  type TagVerifyResponse,
  type TrackingEvent,
  type WebhookEvent,
  type WebhookEventDataMap,
  type WebhookEventOf,
  type WithResponse,
} from '../src/index.js';

const client = new PartnerClient({ apiKey: 'mp_live_x', baseURL: 'https://api.example.com' });

describe('public types', () => {
  it('list() returns a PagePromise that awaits to a Page and iterates items', async () => {
    const events = client.events.list({ merchantId: 'm' });
    expectTypeOf(events).toEqualTypeOf<PagePromise<TrackingEvent>>();
    expectTypeOf(events).toMatchTypeOf<PromiseLike<Page<TrackingEvent>>>();
    expectTypeOf(events).toMatchTypeOf<AsyncIterable<TrackingEvent>>();
    for await (const event of events) expectTypeOf(event).toEqualTypeOf<TrackingEvent>();
    const page = await events;
    expectTypeOf(page).toEqualTypeOf<Page<TrackingEvent>>();
    expectTypeOf(page.data).toEqualTypeOf<TrackingEvent[]>();
    expectTypeOf(page.pagination).toEqualTypeOf<PaginationInfo>();
    expectTypeOf(page.hasNextPage()).toEqualTypeOf<boolean>();
    expectTypeOf(page.getNextPage()).toEqualTypeOf<Promise<Page<TrackingEvent>>>();
    expectTypeOf(page.toArray({ limit: 10 })).toEqualTypeOf<Promise<TrackingEvent[]>>();
    for await (const p of page.iterPages()) expectTypeOf(p).toEqualTypeOf<Page<TrackingEvent>>();
    expectTypeOf(client.merchants.list()).toEqualTypeOf<PagePromise<Merchant>>();
  });

  it('methods return their documented shapes', () => {
    expectTypeOf(client.merchants.create({ name: 'x' })).toEqualTypeOf<APIPromise<MerchantCreateResponse>>();
    expectTypeOf<MerchantCreateResponse>().toEqualTypeOf<{ merchantId: string }>();
    expectTypeOf(client.tags.generate({ merchantId: 'm', domain: 'd.com' })).toEqualTypeOf<
      APIPromise<TagGenerateResponse>
    >();
    expectTypeOf(client.tags.verify({ tagId: 't', subdomain: 'a.d.com' })).toEqualTypeOf<
      APIPromise<TagVerifyResponse>
    >();
    // Still a Promise of the same data: code typed against the old signatures compiles unchanged.
    expectTypeOf(client.merchants.create({ name: 'x' })).toMatchTypeOf<Promise<MerchantCreateResponse>>();
    const created: Promise<MerchantCreateResponse> = client.merchants.create({ name: 'x' });
    void created;
    expectTypeOf(client.webhooks.delete('w')).toMatchTypeOf<Promise<void>>();
    expectTypeOf<TagGenerateResponse['record']['type']>().toEqualTypeOf<'CNAME'>();
  });

  it('parameters are checked', () => {
    // @ts-expect-error merchantId is required
    client.events.list({});
    // @ts-expect-error name is required
    client.merchants.create({});
    // @ts-expect-error sortBy is an enum
    client.events.list({ merchantId: 'm', sortBy: 'muid' });
    client.events.list({ merchantId: 'm', events: ['Purchase'], startDate: new Date(), endDate: '2026-01-01' });
    client.events.list({ merchantId: 'm', events: 'Purchase,PageView' });
    // @ts-expect-error toArray needs a cap
    void client.merchants.list().then((p) => p.toArray());
  });

  it('per-call options and client options', () => {
    expectTypeOf<RequestOptions>().toEqualTypeOf<{
      maxRetries?: number;
      timeout?: number;
      signal?: AbortSignal;
      idempotencyKey?: string;
      headers?: Record<string, string | null | undefined>;
    }>();
    expectTypeOf(client.withOptions({ timeout: 5 })).toEqualTypeOf<PartnerClient>();
    expectTypeOf<ClientOptions>().toHaveProperty('fetch');
  });

  it('errors expose status, code, requestId and the rate-limit delay', () => {
    const error = new NotFoundError(404, 'not found', 'MERCHANT_NOT_FOUND', new Headers(), {});
    expectTypeOf(error.status).toEqualTypeOf<404>();
    expectTypeOf(error.code).toEqualTypeOf<APIErrorCode | null>();
    expectTypeOf(error.requestId).toEqualTypeOf<string | null>();
    expectTypeOf(error).toMatchTypeOf<APIError>();
    expectTypeOf<APIError['status']>().toEqualTypeOf<number>();
    expectTypeOf<RateLimitError['retryAfterMs']>().toEqualTypeOf<number | null>();
    expectTypeOf<APIError['rateLimit']>().toEqualTypeOf<RateLimit | undefined>();
    expectTypeOf<RateLimitError['status']>().toEqualTypeOf<429>();
    // Documented codes autocomplete, unknown codes are still strings.
    const code: APIErrorCode = 'MERCHANT_NOT_FOUND';
    const other: APIErrorCode = 'SOMETHING_NEW';
    expectTypeOf(code).toMatchTypeOf<string>();
    expectTypeOf(other).toMatchTypeOf<string>();
    expectTypeOf(RateLimitError).toBeConstructibleWith('m', null, new Headers(), {}, 1000);
  });

  it('withResponse() and asResponse() types (APIPromise and PagePromise)', async () => {
    const call = client.merchants.create({ name: 'x' });
    expectTypeOf(call.withResponse()).toEqualTypeOf<Promise<WithResponse<MerchantCreateResponse>>>();
    expectTypeOf(call.asResponse()).toEqualTypeOf<Promise<Response>>();
    const { data, response, requestId, rateLimit } = await call.withResponse();
    expectTypeOf(data).toEqualTypeOf<MerchantCreateResponse>();
    expectTypeOf(response).toEqualTypeOf<Response>();
    expectTypeOf(requestId).toEqualTypeOf<string | null>();
    expectTypeOf(rateLimit).toEqualTypeOf<RateLimit | undefined>();
    expectTypeOf<RateLimit>().toEqualTypeOf<{
      limit: number | null;
      remaining: number | null;
      resetSeconds: number | null;
      resetAt: Date | null;
      windowSeconds: number | null;
      policy: string | null;
      source: 'RateLimit' | 'RateLimit-*' | 'X-RateLimit-*';
    }>();
    expectTypeOf(client.events.send({ tagId: 't', events: [] }).withResponse())
      .resolves.toHaveProperty('data')
      .toEqualTypeOf<{
        accepted: number;
        ids: string[];
      }>();
    const list = client.events.list({ merchantId: 'm' });
    expectTypeOf(list.withResponse()).toEqualTypeOf<Promise<WithResponse<Page<TrackingEvent>>>>();
    expectTypeOf(list.asResponse()).toEqualTypeOf<Promise<Response>>();
    const page = await list;
    expectTypeOf(page.response).toEqualTypeOf<Response>();
    expectTypeOf(page.requestId).toEqualTypeOf<string | null>();
    expectTypeOf(page.rateLimit).toEqualTypeOf<RateLimit | undefined>();
  });

  it('webhook events: switch (event.type) narrows event.data', () => {
    const handle = (event: WebhookEvent): string => {
      switch (event.type) {
        case 'webhook.test':
          expectTypeOf(event.data).toEqualTypeOf<{ webhookId: string; message: string }>();
          // @ts-expect-error a test event carries no tag
          void event.data.tagId;
          return event.data.message;
        case 'tag.verified':
        case 'tag.activated':
        case 'tag.disconnected':
        case 'tag.reconnected':
        case 'tag.deleted':
          expectTypeOf(event.data).toEqualTypeOf<Tag>();
          // @ts-expect-error a tag event has no message
          void event.data.message;
          return event.data.tagId;
        case 'merchant.deleted':
          expectTypeOf(event.data).toEqualTypeOf<{ merchantId: string; deletedAt: string; purgedAt: string }>();
          return event.data.merchantId;
        case 'erasure.completed':
          expectTypeOf(event.data).toEqualTypeOf<Erasure>();
          return event.data.muid;
        case 'stats.digest':
          return event.data.week.startDate;
        case 'stats.spike':
          return event.data.hour.start;
        default:
          // Every type is handled: nothing is left.
          expectTypeOf(event).toBeNever();
          return event;
      }
    };
    expectTypeOf(handle).parameter(0).toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookEventOf<'tag.verified'>['data']>().toEqualTypeOf<Tag>();
    expectTypeOf<WebhookEventOf<'webhook.test'>['type']>().toEqualTypeOf<'webhook.test'>();
    expectTypeOf<WebhookEvent['type']>().toEqualTypeOf<
      | 'tag.verified'
      | 'tag.activated'
      | 'tag.disconnected'
      | 'tag.reconnected'
      | 'tag.deleted'
      | 'merchant.deleted'
      | 'erasure.completed'
      | 'stats.digest'
      | 'stats.spike'
      | 'webhook.test'
    >();
    // Every event carries the envelope's fields, whatever its type.
    expectTypeOf<WebhookEvent['timestamp']>().toEqualTypeOf<string>();
    expectTypeOf<WebhookEvent['livemode']>().toEqualTypeOf<boolean>();
    expectTypeOf<WebhookEventOf<'erasure.completed'>['data']>().toEqualTypeOf<
      WebhookEventDataMap['erasure.completed']
    >();
    expectTypeOf(client.webhooks.unwrap('{}', new Headers(), 'whsec_x')).resolves.toEqualTypeOf<WebhookEvent>();
  });
});
