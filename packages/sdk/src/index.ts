export { type ClientOptions, PartnerClient } from './client.js';
export { APIPromise, type WithResponse } from './core/api-promise.js';
export {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  type APIErrorCode,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  type ErrorCode,
  InternalServerError,
  NotFoundError,
  PartnerError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from './core/errors.js';
export { Page, PagePromise, type PaginationInfo, type ToArrayOptions } from './core/pagination.js';
export { parseRateLimit, type RateLimit } from './core/rate-limit.js';
export type { Fetch, HeadersRecord, RequestOptions } from './core/request.js';
export type { Sleep } from './core/retry.js';
export type { SessionGrant } from './core/session-auth.js';
export { MerchantClient, type MerchantClientOptions, MerchantTags } from './merchant-client.js';
export type { DnsCheckDetails, DnsCheckReason, DnsRecordSeen, ExpectedDnsRecord } from './resources/dns-check.js';
export { type Erasure, type ErasureCreateParams, type ErasureStatus, Erasures } from './resources/erasures.js';
export {
  EventExport,
  type EventExportOptions,
  type EventExportParams,
  type ExportSummary,
} from './resources/event-export.js';
export {
  EventStream,
  type EventStreamOptions,
  type EventStreamParams,
  type StreamedEvent,
} from './resources/event-stream.js';
export {
  type EventInput,
  type EventListParams,
  type EventSendParams,
  type EventSendResponse,
  Events,
} from './resources/events.js';
export { type Goal, type GoalCreateParams, Goals } from './resources/goals.js';
export {
  type MerchantSession,
  type MerchantSessionCreateParams,
  MerchantSessions,
} from './resources/merchant-sessions.js';
export {
  type Merchant,
  type MerchantCreateParams,
  type MerchantCreateResponse,
  type MerchantDeleteResponse,
  type MerchantListParams,
  Merchants,
  type MerchantUpdateParams,
} from './resources/merchants.js';
export {
  type PartnerSettings,
  Settings,
  type SettingsUpdateParams,
  type StatsSpikeSettings,
} from './resources/settings.js';
export {
  Stats,
  type StatsAttribution,
  type StatsAttributionDimension,
  type StatsAttributionModel,
  type StatsAttributionParams,
  type StatsAttributionRow,
  type StatsBreakdown,
  type StatsBreakdownParams,
  type StatsBreakdownRow,
  type StatsDimension,
  type StatsFilter,
  type StatsFunnel,
  type StatsFunnelParams,
  type StatsGoalTotals,
  type StatsInterval,
  type StatsParams,
  type StatsPoint,
  type StatsRange,
  type StatsRealtime,
  type StatsRevenue,
  type StatsSummary,
  type StatsSummaryParams,
  type StatsTimeseries,
  type StatsTimeseriesParams,
  type StatsTotals,
} from './resources/stats.js';
export {
  type DnsRecord,
  type Tag,
  type TagCheck,
  type TagConsentMode,
  type TagConsentSettings,
  type TagDeleteResponse,
  type TagGenerateParams,
  type TagGenerateResponse,
  type TagSnippet,
  type TagStatus,
  type TagSummary,
  Tags,
  type TagUpdateParams,
  type TagVerifyParams,
  type TagVerifyResponse,
} from './resources/tags.js';
export {
  TestHelpers,
  type TriggerableStatsEvent,
  type TriggerableTagEvent,
  type TriggerStatsParams,
  type TriggerStatsResponse,
  type TriggerTagParams,
} from './resources/test-helpers.js';
export type { EventConsent, TrackingEvent } from './resources/tracking-event.js';
export {
  type UnwrapOptions,
  unwrapWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookCreateParams,
  type WebhookCreateResponse,
  WebhookDeliveries,
  type WebhookDelivery,
  type WebhookDeliveryError,
  type WebhookDeliveryListParams,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  type WebhookErasureCompleted,
  type WebhookEvent,
  type WebhookEventDataMap,
  type WebhookEventOf,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookListParams,
  type WebhookMerchantDeleted,
  type WebhookRotateSecretResponse,
  type WebhookStatsDigest,
  type WebhookStatsSpike,
  type WebhookStatsWeekBreakdowns,
  Webhooks,
  type WebhookTag,
  WebhookVerificationError,
} from './resources/webhooks.js';
export { VERSION } from './version.js';
