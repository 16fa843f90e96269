// The SDK declares its own interfaces (so that its .d.ts needs neither zod nor the private schemas
// package). These checks keep them identical to the server's zod schemas: a schema change that the
// SDK does not follow fails `pnpm typecheck` and `vitest` here.
import type * as Schemas from '@partner/shared-schemas';
import type { NormalizedPagination } from '@partner/shared-schemas/normalize';
import { describe, expectTypeOf, it } from 'vitest';
import type * as Sdk from '../src/index.js';

describe('SDK types match @partner/shared-schemas', () => {
  it('resources', () => {
    expectTypeOf<Sdk.Merchant>().toEqualTypeOf<Schemas.Merchant>();
    expectTypeOf<Sdk.TagSummary>().toEqualTypeOf<Schemas.TagSummary>();
    expectTypeOf<Sdk.TagStatus>().toEqualTypeOf<Schemas.TagStatus>();
    expectTypeOf<Sdk.DnsRecord>().toEqualTypeOf<Schemas.DnsRecord>();
    expectTypeOf<Sdk.Tag>().toEqualTypeOf<Schemas.Tag>();
    expectTypeOf<Sdk.TagCheck>().toEqualTypeOf<Schemas.TagCheck>();
    expectTypeOf<Sdk.DnsCheckDetails>().toEqualTypeOf<Schemas.DnsCheckDetails>();
    expectTypeOf<Sdk.DnsCheckReason>().toEqualTypeOf<Schemas.DnsCheckReason>();
    expectTypeOf<NonNullable<Sdk.APIError['details']>>().toEqualTypeOf<NonNullable<Schemas.ErrorBody['details']>>();
    // `data` is the SDK's own (raw_data parsed): the rest is the wire's.
    expectTypeOf<Omit<Sdk.TrackingEvent, 'data'>>().toEqualTypeOf<Schemas.TrackingEvent>();
    expectTypeOf<Sdk.TrackingEvent['data']>().toEqualTypeOf<unknown>();
    expectTypeOf<Sdk.Erasure>().toEqualTypeOf<Schemas.Erasure>();
    expectTypeOf<Sdk.EventConsent>().toEqualTypeOf<Schemas.EventConsent>();
    expectTypeOf<Sdk.TagConsentMode>().toEqualTypeOf<Schemas.TagConsentMode>();
    expectTypeOf<Omit<Sdk.StreamedEvent, 'data'>>().toEqualTypeOf<Schemas.StreamedEvent>();
    expectTypeOf<Sdk.StatsSummary>().toEqualTypeOf<Schemas.StatsSummaryResponse>();
    expectTypeOf<Sdk.StatsTimeseries>().toEqualTypeOf<Schemas.StatsTimeseriesResponse>();
    expectTypeOf<Sdk.StatsBreakdown>().toEqualTypeOf<Schemas.StatsBreakdownResponse>();
    expectTypeOf<Sdk.StatsRealtime>().toEqualTypeOf<Schemas.StatsRealtimeResponse>();
    expectTypeOf<Sdk.StatsFunnel>().toEqualTypeOf<Schemas.StatsFunnelResponse>();
    expectTypeOf<Sdk.StatsAttribution>().toEqualTypeOf<Schemas.StatsAttributionResponse>();
    expectTypeOf<Sdk.Goal>().toEqualTypeOf<Schemas.Goal>();
    expectTypeOf<Sdk.StatsDimension>().toEqualTypeOf<Schemas.StatsDimension>();
    expectTypeOf<Sdk.PartnerSettings>().toEqualTypeOf<Schemas.PartnerSettings>();
  });

  it('webhook events: tag.* data is the shared Tag (GET /v1/partners/tag/{tagId})', () => {
    expectTypeOf<Sdk.WebhookEvent>().toEqualTypeOf<Schemas.WebhookEvent>();
    expectTypeOf<Sdk.WebhookTag>().toEqualTypeOf<Schemas.Tag>();
    expectTypeOf<Sdk.WebhookEventType>().toEqualTypeOf<Schemas.WebhookEventType>();
    for (const type of [
      'tag.verified',
      'tag.activated',
      'tag.disconnected',
      'tag.reconnected',
      'tag.deleted',
    ] as const) {
      expectTypeOf<Extract<Sdk.WebhookEvent, { type: typeof type }>['data']>().toEqualTypeOf<Schemas.Tag>();
    }
    expectTypeOf<Extract<Sdk.WebhookEvent, { type: 'webhook.test' }>['data']>().toEqualTypeOf<
      Extract<Schemas.WebhookEvent, { type: 'webhook.test' }>['data']
    >();
  });

  it('responses', () => {
    expectTypeOf<Sdk.MerchantCreateResponse>().toEqualTypeOf<Schemas.CreateMerchantResponse>();
    expectTypeOf<Sdk.MerchantDeleteResponse>().toEqualTypeOf<Schemas.DeleteMerchantResponse>();
    expectTypeOf<Sdk.TagDeleteResponse>().toEqualTypeOf<Schemas.DeleteTagResponse>();
    expectTypeOf<Sdk.WebhookMerchantDeleted>().toEqualTypeOf<Schemas.WebhookMerchantDeletedData>();
    expectTypeOf<Sdk.WebhookStatsDigest>().toEqualTypeOf<Schemas.WebhookStatsDigestData>();
    expectTypeOf<Sdk.WebhookStatsSpike>().toEqualTypeOf<Schemas.WebhookStatsSpikeData>();
    expectTypeOf<Sdk.TriggerStatsResponse>().toEqualTypeOf<Schemas.TriggerStatsResponse>();
    expectTypeOf<Sdk.TagGenerateResponse>().toEqualTypeOf<Schemas.GenerateTagResponse>();
    expectTypeOf<Sdk.TagVerifyResponse>().toEqualTypeOf<Schemas.VerifyTagResponse>();
    expectTypeOf<Sdk.TagSnippet>().toEqualTypeOf<Schemas.TagSnippetResponse>();
    expectTypeOf<Sdk.EventSendResponse>().toMatchTypeOf<Schemas.CollectResponse>();
  });

  it('pagination: the public type is assignable to the documented envelopes', () => {
    expectTypeOf<Sdk.PaginationInfo>().toMatchTypeOf<Schemas.Pagination>();
    expectTypeOf<Sdk.PaginationInfo>().toMatchTypeOf<Schemas.EventsPagination>();
    expectTypeOf<Sdk.PaginationInfo>().toMatchTypeOf<Omit<NormalizedPagination, 'totalItems' | 'totalPages'>>();
  });

  it('error codes', () => {
    expectTypeOf<Sdk.ErrorCode>().toEqualTypeOf<Schemas.ErrorCode>();
  });

  it('request bodies and queries are accepted by the schemas', () => {
    expectTypeOf<Sdk.MerchantCreateParams>().toMatchTypeOf<Schemas.CreateMerchantInput>();
    expectTypeOf<Sdk.TagGenerateParams>().toMatchTypeOf<Schemas.GenerateTagInput>();
    expectTypeOf<Sdk.TagVerifyParams>().toMatchTypeOf<Schemas.VerifyTagInput>();
    expectTypeOf<Sdk.TagUpdateParams & { tagId: string }>().toMatchTypeOf<Schemas.UpdateTagInput>();
    expectTypeOf<Sdk.EventInput>().toMatchTypeOf<Omit<Schemas.CollectEvent, 'event_time'>>();
    expectTypeOf<Sdk.EventSendParams['tagId']>().toEqualTypeOf<Schemas.CollectInput['tagId']>();
    expectTypeOf<Sdk.MerchantListParams>().toMatchTypeOf<Schemas.ListMerchantsQuery>();
    expectTypeOf<Required<Sdk.EventListParams>['sortBy']>().toEqualTypeOf<
      NonNullable<Schemas.ListEventsQuery['sortBy']>
    >();
    expectTypeOf<Required<Sdk.EventListParams>['sortOrder']>().toEqualTypeOf<
      NonNullable<Schemas.ListEventsQuery['sortOrder']>
    >();
  });
});
