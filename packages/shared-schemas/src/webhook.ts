import { z } from 'zod';
import { Livemode, Timestamp, Uuid } from './common.js';
import { Erasure } from './erasure.js';
import { Pagination, paginationQuery } from './pagination.js';
import { WebhookStatsDigestData, WebhookStatsSpikeData } from './stats-notices.js';
import { Tag } from './tag.js';

export const WEBHOOKS_DEFAULT_LIMIT = 10;
export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 500;
/** Standard Webhooks secret prefix: `whsec_` + base64 of the key bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The `data` of every `tag.*` event: the tag exactly as `GET /v1/partners/tag/{tagId}` returns it after the change. */
export const WebhookTagData = Tag;

/** The `data` of `merchant.deleted`: sent once the merchant's rows are purged. */
export const WebhookMerchantDeletedData = z
  .object({
    merchantId: Uuid,
    deletedAt: Timestamp.meta({
      description: 'When DELETE was answered: the merchant was gone for every reader from then.',
    }),
    purgedAt: Timestamp.meta({ description: 'When the purge of its events, aggregates and webhooks finished.' }),
  })
  .meta({ id: 'WebhookMerchantDeletedData' });
export type WebhookMerchantDeletedData = z.infer<typeof WebhookMerchantDeletedData>;

/** The `data` of `erasure.completed`: the erasure as `GET /v1/partners/erasures/{erasureId}` returns it. */
export const WebhookErasureCompletedData = Erasure;

/**
 * Every webhook event (docs/decisions/webhooks.md): its type, the schema of its `data` and what it
 * means. Adding an event is one line here: the type list, the enum and its description, and the
 * discriminated union below follow (the SDK's `WebhookEventDataMap` is kept equal by a type test).
 */
const WEBHOOK_EVENTS = {
  'tag.verified': { data: WebhookTagData, means: 'a custom tag passed its DNS check' },
  'tag.activated': { data: WebhookTagData, means: 'its first event arrived' },
  'tag.disconnected': { data: WebhookTagData, means: 'a health check found the record gone' },
  'tag.reconnected': { data: WebhookTagData, means: 'a health check found the record back' },
  'tag.deleted': { data: WebhookTagData, means: 'the tag was deleted (data: the tag as it was)' },
  'merchant.deleted': { data: WebhookMerchantDeletedData, means: "a deleted merchant's data has been purged" },
  'erasure.completed': { data: WebhookErasureCompletedData, means: 'a visitor erasure finished' },
  'stats.digest': {
    data: WebhookStatsDigestData,
    means: "a merchant's week (settings' `statsDigest`): Monday 06:00 in its zone",
  },
  'stats.spike': {
    data: WebhookStatsSpikeData,
    means: "an hour's visitors at least `statsSpike.multiple` x the usual (at most one a day per merchant)",
  },
  'webhook.test': { data: z.object({ webhookId: Uuid, message: z.string() }), means: 'sent on request' },
} as const;
type WebhookEvents = typeof WEBHOOK_EVENTS;

/** The events a webhook endpoint can receive, in the order above. */
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as [keyof WebhookEvents, ...(keyof WebhookEvents)[]];
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({
  id: 'WebhookEventType',
  description: WEBHOOK_EVENT_TYPES.map((type) => `\`${type}\`: ${WEBHOOK_EVENTS[type].means}`).join('; '),
  example: 'tag.verified',
});
export type WebhookEventType = z.infer<typeof WebhookEventType>;

export const WebhookDeliveryStatus = z.enum(['pending', 'succeeded', 'failed']).meta({
  id: 'WebhookDeliveryStatus',
  description:
    '`pending`: not yet delivered (the next attempt is at `nextAttemptAt`); `succeeded`: a 2xx answer within 10 s; ' +
    '`failed`: every scheduled attempt failed (a manual retry makes one more).',
  example: 'succeeded',
});
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;

export const WEBHOOK_DELIVERY_ERRORS = [
  'http_status',
  'timeout',
  'dns',
  'blocked_address',
  'connection_refused',
  'connection_reset',
  'tls',
  'network',
  'endpoint_deleted',
] as const;
export const WebhookDeliveryError = z.enum(WEBHOOK_DELIVERY_ERRORS).meta({
  id: 'WebhookDeliveryError',
  description:
    'Why an attempt failed, as a class (the detail stays in the server logs): `http_status`: the endpoint answered ' +
    'outside 2xx (see `lastStatusCode`); `timeout`: no complete answer in time; `dns`: the host name did not ' +
    'resolve; `blocked_address`: the URL or an address its name resolves to is not public (refused, never ' +
    'called); `connection_refused` / `connection_reset`: the connection was refused / closed; `tls`: the TLS ' +
    'handshake or certificate failed; `network`: any other connection failure; `endpoint_deleted`: the endpoint ' +
    'was deleted before delivery.',
  example: 'http_status',
});
export type WebhookDeliveryError = z.infer<typeof WebhookDeliveryError>;

const WebhookId = Uuid.meta({
  description: 'The webhook endpoint id.',
  example: '5f0c6f1e-8a8c-4d4a-9a53-1f2b3c4d5e6f',
});
const DeliveryId = Uuid.meta({ description: 'The delivery id.', example: '9b2d7c1a-4e5f-4a6b-8c7d-0e1f2a3b4c5d' });
const Secret = z
  .string()
  .nullable()
  .meta({
    description:
      'The signing secret, `whsec_` + base64 key (Standard Webhooks). Shown only here: store it to verify signatures. ' +
      '`null` only in a replay of an `Idempotency-Key` request (`secretOmitted: true`): secrets are never stored for ' +
      'replays, so rotate the secret to get a new one.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  });
const SecretOmitted = z.boolean().meta({
  description:
    '`true` when this is a replay of an `Idempotency-Key` request and `secret` is therefore `null` (the first ' +
    'response carried it; it is never stored for replays).',
  example: false,
});

export const CreateWebhookInput = z
  .object({
    url: z
      .string({ message: 'is required and must be a string' })
      .trim()
      .min(1, { message: 'must not be empty' })
      .max(WEBHOOK_URL_MAX, { message: `must be at most ${WEBHOOK_URL_MAX} characters` })
      .meta({
        description:
          'Where events are POSTed: an `https` URL on a public address (no loopback, private, link-local or metadata addresses).',
        example: 'https://hooks.example.com/partner-tags',
      }),
    events: z
      .array(WebhookEventType)
      .min(1, { message: 'must name at least one event type (omit it for every type)' })
      .max(WEBHOOK_EVENT_TYPES.length)
      .optional()
      .meta({
        description: 'Event types to receive; omitted: every type, including ones added later.',
        example: ['tag.verified', 'tag.activated'],
      }),
    description: z
      .string({ message: 'must be a string' })
      .trim()
      .max(WEBHOOK_DESCRIPTION_MAX, { message: `must be at most ${WEBHOOK_DESCRIPTION_MAX} characters` })
      .optional()
      .meta({ description: 'A note for your own records.', example: 'Production notifications' }),
  })
  .meta({ id: 'CreateWebhookInput' });
export type CreateWebhookInput = z.input<typeof CreateWebhookInput>;

/** A webhook endpoint as listed (never with its secret). */
export const WebhookEndpoint = z
  .object({
    webhookId: WebhookId,
    url: z.string().meta({ example: 'https://hooks.example.com/partner-tags' }),
    events: z
      .array(WebhookEventType)
      .nullable()
      .meta({ description: 'Event types it receives; null: every type.', example: ['tag.verified'] }),
    description: z.string().nullable().meta({ example: 'Production notifications' }),
    livemode: Livemode,
    createdAt: Timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const CreateWebhookResponse = WebhookEndpoint.extend({ secret: Secret, secretOmitted: SecretOmitted }).meta({
  id: 'CreateWebhookResponse',
});
export type CreateWebhookResponse = z.infer<typeof CreateWebhookResponse>;

export const ListWebhooksQuery = z.object(paginationQuery(WEBHOOKS_DEFAULT_LIMIT)).meta({ id: 'ListWebhooksQuery' });
export type ListWebhooksQuery = z.input<typeof ListWebhooksQuery>;

export const ListWebhooksResponse = z
  .object({ webhooks: z.array(WebhookEndpoint), pagination: Pagination })
  .meta({ id: 'ListWebhooksResponse' });
export type ListWebhooksResponse = z.infer<typeof ListWebhooksResponse>;

export const WebhookIdInput = z.object({ webhookId: WebhookId }).meta({ id: 'WebhookIdInput' });
export type WebhookIdInput = z.input<typeof WebhookIdInput>;

export const DeleteWebhookResponse = z.void().meta({ id: 'DeleteWebhookResponse' });

export const RotateWebhookSecretResponse = z
  .object({
    secret: Secret,
    secretOmitted: SecretOmitted,
    previousSecretExpiresAt: Timestamp.meta({
      description: 'Until then every message carries two signatures: one with the new secret, one with the old.',
    }),
  })
  .meta({ id: 'RotateWebhookSecretResponse' });
export type RotateWebhookSecretResponse = z.infer<typeof RotateWebhookSecretResponse>;

/** One message to one endpoint, with its delivery state. */
export const WebhookDelivery = z
  .object({
    deliveryId: DeliveryId,
    messageId: Uuid.meta({
      description: 'The message id: the `webhook-id` header, the same on every attempt (deduplicate on it).',
      example: '2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a2b3c4d',
    }),
    eventType: WebhookEventType,
    status: WebhookDeliveryStatus,
    attempts: z.number().int().min(0).meta({ description: 'Attempts made so far.', example: 1 }),
    lastStatusCode: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'HTTP status of the last attempt; null before one or when none came back.', example: 200 }),
    lastError: WebhookDeliveryError.nullable().meta({
      description: 'Why the last attempt failed (a class); null before one and after a success.',
      example: null,
    }),
    nextAttemptAt: Timestamp.nullable().meta({
      description: 'When it is tried next; null once it succeeded or failed.',
    }),
    createdAt: Timestamp,
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const TestWebhookResponse = WebhookDelivery.meta({ id: 'TestWebhookResponse' });
export type TestWebhookResponse = z.infer<typeof TestWebhookResponse>;

export const ListWebhookDeliveriesQuery = z
  .object({
    webhookId: WebhookId,
    ...paginationQuery(WEBHOOKS_DEFAULT_LIMIT),
  })
  .meta({ id: 'ListWebhookDeliveriesQuery' });
export type ListWebhookDeliveriesQuery = z.input<typeof ListWebhookDeliveriesQuery>;

export const ListWebhookDeliveriesResponse = z
  .object({ deliveries: z.array(WebhookDelivery), pagination: Pagination })
  .meta({ id: 'ListWebhookDeliveriesResponse' });
export type ListWebhookDeliveriesResponse = z.infer<typeof ListWebhookDeliveriesResponse>;

export const RetryWebhookDeliveryInput = z
  .object({ webhookId: WebhookId, deliveryId: DeliveryId })
  .meta({ id: 'RetryWebhookDeliveryInput' });
export type RetryWebhookDeliveryInput = z.input<typeof RetryWebhookDeliveryInput>;

/** What every webhook body carries besides `type` and `data` (livemode: the endpoint's mode). */
const envelope = { timestamp: Timestamp, livemode: Livemode };

/** The body of every webhook request: `{ type, timestamp, livemode, data }`. */
const event = <T extends WebhookEventType, D extends z.ZodType>(type: T, data: D) =>
  z.object({ type: z.literal(type), ...envelope, data });

/** One member of the union: the body of the event `T`. */
type EventSchema<T extends WebhookEventType> = z.ZodObject<
  { type: z.ZodLiteral<T>; data: WebhookEvents[T]['data'] } & typeof envelope
>;
type AnyEventSchema = { [T in WebhookEventType]: EventSchema<T> }[WebhookEventType];

/** Every webhook body, discriminated on `type`. */
export const WebhookEvent = z.discriminatedUnion(
  'type',
  WEBHOOK_EVENT_TYPES.map((type) => event(type, WEBHOOK_EVENTS[type].data)) as unknown as [
    AnyEventSchema,
    ...AnyEventSchema[],
  ],
);
export type WebhookEvent = z.infer<typeof WebhookEvent>;
