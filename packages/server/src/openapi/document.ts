import { AuthErrorBody, DnsCheckDetails, ErrorCode } from '@partner/shared-schemas';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { ERROR_TABLE, type ErrorReason } from '../kernel/errors.js';
import { appRouter } from '../routes/_app.js';
import { allProcedureMeta } from '../routes/procedure-meta.js';
import type { Meta } from '../routes/procedures.js';
import { addRouteOperations, routePaths } from './route-operations.js';
import { componentSchema, exampleFor } from './schemas.js';

const REASON_TEXT: Record<ErrorReason, string> = {
  UNAUTHORIZED: 'missing, malformed, unknown or revoked API key',
  BEARER_TOKEN_MISSING: 'no bearer token',
  VALIDATION_ERROR: 'invalid request parameters or body',
  UNSUPPORTED_MEDIA_TYPE: 'the body is not sent as JSON (`Content-Type: application/json`, parameters allowed)',
  DNS_VERIFICATION_FAILED: 'the CNAME record is missing or points elsewhere',
  TAG_CONFIGURATION_INCOMPLETE: 'tag configuration incomplete',
  PAYLOAD_TOO_LARGE: 'body over 1 MB',
  REQUEST_HEADERS_TOO_LARGE: 'request line or headers over 16 KB',
  URI_TOO_LONG: 'request URL over 8 KB',
  REQUEST_TIMEOUT: 'request not received in time',
  ACCESS_DENIED: "the tag belongs to another partner's merchant",
  SESSION_SCOPE: 'a merchant session token used beyond its scope (an operation it may not call, or another merchant)',
  TEST_MODE_ONLY: 'a test-mode helper called with a live key (`mp_live_...`): use an `mp_test_...` key',
  TAG_STATE_CONFLICT: 'the tag is not in a state this event can follow (the message says which)',
  MERCHANT_NOT_FOUND: "the merchant does not exist, is another partner's, or has no tag",
  TAG_NOT_FOUND: 'the tag does not exist',
  INTEGRATION_NOT_FOUND: 'no tag integration found',
  NOT_FOUND: 'unknown path',
  METHOD_NOT_ALLOWED: 'the path does not answer this method (see `Allow`)',
  WEBHOOK_NOT_FOUND: "the webhook endpoint does not exist, was deleted, or is another partner's",
  WEBHOOK_DELIVERY_NOT_FOUND: 'the delivery does not exist or belongs to another webhook endpoint',
  ERASURE_NOT_FOUND: "the erasure does not exist or is another partner's",
  GOAL_NOT_FOUND: "the goal does not exist or is another merchant's",
  TAG_NOT_LIVE: 'the tag does not take events yet (custom domain not verified)',
  IDEMPOTENCY_KEY_REUSED: 'the Idempotency-Key was used with another request',
  LIMIT_EXCEEDED: 'the partner has reached a per-partner cap (the message names it and its value)',
  RATE_LIMITED: 'too many requests',
  DATABASE_ERROR: 'a database operation failed (retry with backoff)',
  DATABASE_UNAVAILABLE: 'the database is not answering; safe to retry after Retry-After seconds',
  INTERNAL: 'the request could not be processed',
  SERVICE_UNAVAILABLE: 'a dependency is unavailable (retry with backoff)',
  NOT_READY: 'the database or the event log is not answering',
  EXTERNAL_SERVICE_ERROR: 'the DNS verification service is unavailable (retry with backoff)',
  STATS_UNAVAILABLE: 'the statistics did not answer in time; safe to retry after Retry-After seconds',
  STATS_NOT_CONFIGURED: 'this deployment runs several processes without CLICKHOUSE_URL: no statistics',
  STATS_OFF: 'statistics are off on this server (STATS=off)',
  STREAM_CONSUMER_TOO_SLOW: 'the stream consumer fell too far behind (final `error` event; resume with the last id)',
};

const BODY_REASONS: ErrorReason[] = ['UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'];

/** Failures the HTTP layer adds to every operation and to partner POSTs. */
function layerReasons(method: string, isPartnerOperation: boolean): ErrorReason[] {
  const reasons: ErrorReason[] = ['RATE_LIMITED', 'DATABASE_UNAVAILABLE'];
  // Every method but GET has its body read (transport/rest/rest-handler.ts): a wrong type or size answers.
  if (method !== 'get') reasons.push(...BODY_REASONS);
  if (method === 'post' && isPartnerOperation) reasons.push('IDEMPOTENCY_KEY_REUSED');
  // Any partner operation answers a merchant session token beyond its scope with 403.
  if (isPartnerOperation) reasons.push('SESSION_SCOPE');
  return reasons;
}

const IDEMPOTENCY_KEY_PARAMETER = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes a retried POST safe: the first response for a key is stored for 24 h and replayed for the same ' +
    'request; the same key with another request answers 409 IDEMPOTENCY_KEY_REUSED.',
  // The example sits in the schema, not on the parameter: Swagger UI fills "Try it out" inputs from
  // a parameter example, and one fixed key sent with two different bodies answers 409.
  schema: { type: 'string', minLength: 1, maxLength: 255, examples: ['0b6f4c1e-7d2a-4e8b-9c3d-5a1f2e6b7c8d'] },
};

function errorResponses(reasons: ErrorReason[], authenticated: boolean) {
  const byStatus = new Map<number, ErrorReason[]>();
  for (const reason of reasons) {
    const { status } = ERROR_TABLE[reason];
    byStatus.set(status, [...(byStatus.get(status) ?? []), reason]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    const description = list.map((reason) => `${ERROR_TABLE[reason].code}: ${REASON_TEXT[reason]}`).join('; ');
    const schema =
      status === 401 && authenticated
        ? { oneOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/AuthError' }] }
        : { $ref: '#/components/schemas/Error' };
    const [first] = list as [ErrorReason];
    const example = {
      message: `${REASON_TEXT[first][0]?.toUpperCase()}${REASON_TEXT[first].slice(1)}`,
      code: ERROR_TABLE[first].code,
    };
    responses[String(status)] = { description, content: { 'application/json': { schema, example } } };
  }
  return responses;
}

/** Every tag an operation may carry, with its description (a tag missing here fails test/openapi-lint.test.ts). */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Merchants: 'The merchants a partner registers; each carries its tags.',
  Tags: 'Tracking tags for merchant domains: generation, DNS verification of custom domains, the install snippet.',
  Events: "A merchant's tracking events: one page at a time, or streamed live as Server-Sent Events.",
  Collection: 'The public collection endpoint: events sent for a live tag, with no partner token.',
  Webhooks:
    'Signed event notifications (Standard Webhooks): endpoints, secret rotation, test events and the delivery log with retries.',
  Stats:
    "A merchant's statistics: totals, visits, a time series, top values, visitors now, funnels and attribution, filtered by any dimension.",
  Goals: "A merchant's conversions: events of a name or page views of a path pattern, counted by the statistics.",
  Settings: "The partner's own settings: the default retention of its merchants' events.",
  Erasures:
    "A visitor's right to erasure: their events deleted in the background, from the statistics too, optional suppression.",
  'Test mode':
    'Helpers for `mp_test_...` keys only: drive a test tag through its later states, each with its real webhook.',
};

const SHARED_HEADERS: Record<string, Record<string, unknown>> = {
  RequestId: {
    description:
      'Identifies this request in the server logs. A valid incoming `x-request-id` (1..128 of `A-Za-z0-9._:-`) is echoed; otherwise one is made.',
    schema: { type: 'string', maxLength: 128 },
    example: 'req_5f0c6a1d2b3e4f5a6b7c8d9e0f1a2b3c',
  },
  RateLimitLimit: {
    description:
      'Requests allowed per rate-limit window for this API key (partner operations) or client address (collection).',
    schema: { type: 'integer', minimum: 1 },
    example: 600,
  },
  RateLimitRemaining: {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', minimum: 0 },
    example: 599,
  },
  RateLimitReset: {
    description: 'Seconds until the current window ends and the budget is restored.',
    schema: { type: 'integer', minimum: 0 },
    example: 60,
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
    example: 1,
  },
  NextLink: {
    description:
      'Present when another page follows: `</v1/partners/events?merchantId=...&cursor=...>; rel="next"` (RFC 8288), ' +
      "this request's filters with `pagination.nextCursor`, every value percent-encoded. It arrives with the response " +
      'head, so a client can ask for the next page before it has read this one.',
    schema: { type: 'string' },
    example:
      '</v1/partners/events?merchantId=3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c&limit=100&cursor=WzEsMiwiMjAyNi0xMS0yMlQxMDowMDowMC4wMDBaIiwiZXZ0LTEiXQ.q2b1cXy0m2jv3dE5gQnN1A>; rel="next"',
  },
  IdempotentReplayed: {
    description:
      '`true` when this response is the stored answer to an earlier request with the same `Idempotency-Key` (replayed, not executed again).',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
};

const headerRef = (name: keyof typeof SHARED_HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** The headers a response of an operation carries. */
function responseHeaders(status: number, rateLimited: boolean, idempotent: boolean): Record<string, unknown> {
  const headers: Record<string, unknown> = { 'x-request-id': headerRef('RequestId') };
  // Rate limits are counted after authentication: every answer but a 401 carries the budget.
  if (rateLimited && status !== 401) {
    headers['RateLimit-Limit'] = headerRef('RateLimitLimit');
    headers['RateLimit-Remaining'] = headerRef('RateLimitRemaining');
    headers['RateLimit-Reset'] = headerRef('RateLimitReset');
  }
  if (status === 429 || status === 503 || (idempotent && status === 409))
    headers['Retry-After'] = headerRef('RetryAfter');
  if (idempotent && status >= 200 && status < 300) headers['Idempotent-Replayed'] = headerRef('IdempotentReplayed');
  return headers;
}

type Operation = Record<string, unknown>;
type Doc = ReturnType<typeof generateOpenApiDocument>;

/** What every operation gets, procedure or route. */
function finishOperation(
  doc: Doc,
  operation: Operation,
  options: { rateLimited: boolean; idempotent: boolean; public: boolean },
): void {
  const root = doc as unknown as Record<string, unknown>;
  if (options.public) operation.security = [];
  for (const parameter of (operation.parameters ?? []) as Array<Record<string, unknown>>) {
    const schema = (parameter.schema ?? {}) as Record<string, unknown>;
    if (parameter.description === undefined && typeof schema.description === 'string') {
      parameter.description = schema.description;
    }
    const hasExample =
      parameter.example !== undefined || parameter.examples !== undefined || schema.examples !== undefined;
    if (!hasExample) parameter.example = exampleFor(schema, root);
  }
  const body = operation.requestBody as { content?: Record<string, Record<string, unknown>> } | undefined;
  for (const media of Object.values(body?.content ?? {})) {
    if (media.example === undefined && media.examples === undefined) media.example = exampleFor(media.schema, root);
  }
  for (const [statusKey, response] of Object.entries(
    (operation.responses ?? {}) as Record<string, Record<string, unknown>>,
  )) {
    const status = Number(statusKey);
    response.headers = {
      ...responseHeaders(status, options.rateLimited, options.idempotent),
      ...(response.headers as object),
    };
    for (const media of Object.values((response.content ?? {}) as Record<string, Record<string, unknown>>)) {
      if (media.example === undefined && media.examples === undefined) media.example = exampleFor(media.schema, root);
    }
  }
}

/** `DnsCheckDetails` and the schemas it refers to, as components (refs into `#/components/schemas`). */
function dnsCheckComponents(): Record<string, unknown> {
  const json = z.toJSONSchema(DnsCheckDetails, { target: 'draft-2020-12' }) as Record<string, unknown>;
  const defs = (json.$defs ?? {}) as Record<string, Record<string, unknown>>;
  const rewrite = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/'));
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(defs)) {
    const { id: _id, ...rest } = schema;
    out[name] = rewrite(rest);
  }
  return out;
}

/** The OpenAPI 3.1 document, generated from the procedures and corrected where the generator cannot tell the truth. */
export function buildOpenApiDocument(baseUrl?: string): Doc {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Partner Tags API',
    version: '1.0.0',
    description:
      'Partners register merchants, generate tracking tags for merchant domains, verify custom domains in DNS ' +
      'and read the tracking events collected for a merchant. Authenticate with `Authorization: Bearer mp_live_...`; ' +
      'an `mp_test_...` key works on test-mode data only (simulated DNS, triggered tag states).',
    baseUrl: baseUrl ?? '/',
    paths: routePaths(),
  });
  describeDeployment(doc, baseUrl);
  addComponents(doc);
  for (const { meta } of allProcedureMeta()) completeProcedureOperation(doc, meta);
  // The routes that are not procedures (routes/route-table.ts): every one is charged to a budget.
  // Their partner routes refuse a merchant session token (403 SESSION_SCOPE) as every partner operation.
  const routeErrors = (reasons: ErrorReason[], authenticated: boolean) =>
    errorResponses(authenticated ? [...reasons, 'SESSION_SCOPE'] : reasons, authenticated);
  addRouteOperations(doc, routeErrors, (operation, route) =>
    finishOperation(doc, operation, { rateLimited: true, idempotent: false, public: route.auth !== 'partner' }),
  );
  doc.tags = usedTags(doc);
  return doc;
}

/** Licence, contact and the server URL: PUBLIC_BASE_URL, or relative to wherever the document was fetched. */
function describeDeployment(doc: Doc, baseUrl: string | undefined): void {
  doc.info = {
    ...doc.info,
    license: { name: 'MIT', identifier: 'MIT' },
    contact: { name: 'Partner Tags API support', email: 'api@partner-tags.example' },
  };
  doc.servers = [
    baseUrl
      ? { url: baseUrl, description: 'This deployment (PUBLIC_BASE_URL)' }
      : { url: '/', description: 'The server this document was fetched from' },
  ];
}

/** The error body, the DNS diagnostics and the two security schemes, replacing the generator's error schemas. */
function addComponents(doc: Doc): void {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  schemas.ErrorCode = componentSchema(ErrorCode);
  schemas.Error = {
    type: 'object',
    required: ['message', 'code'],
    properties: {
      message: {
        type: 'string',
        description: 'Human-readable explanation.',
        example: 'Invalid request: merchantId: must be a valid UUID',
      },
      code: { $ref: '#/components/schemas/ErrorCode' },
      details: {
        $ref: '#/components/schemas/DnsCheckDetails',
        description: 'Machine-readable diagnostics, on failed DNS verifications (422 and 503 of tag verify).',
      },
    },
  };
  // The diagnostics' component schemas come with the Tag schema (its lastCheck); the details need their own.
  for (const [name, schema] of Object.entries(dnsCheckComponents())) schemas[name] ??= schema;
  schemas.AuthError = componentSchema(AuthErrorBody);
  doc.components = {
    ...doc.components,
    schemas: schemas as never,
    headers: SHARED_HEADERS as never,
    securitySchemes: {
      Authorization: {
        type: 'http',
        scheme: 'bearer',
        description:
          'An API key issued at onboarding: `mp_live_...` for live data, `mp_test_...` for test mode (its own data, ' +
          'simulated DNS verification, the test-mode helpers).',
      },
      MerchantSession: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A merchant session token, `ms_...` (`POST /v1/partners/merchant/{merchantId}/sessions`): short-lived, for ' +
          'one merchant, accepted only by the operations that list this scheme. A browser may hold it: a request ' +
          'with it from one of the session’s `allowedOrigins` gets `Access-Control-Allow-Origin` with that origin ' +
          '(never `*`) and `Vary: Origin`; the preflight (`OPTIONS`) of these paths answers 204 for any origin, ' +
          'since it carries no token, and the actual request decides. An API key never gets CORS headers.',
      },
    },
  };
}

/** One procedure's operation as the API answers it: success status, error responses, idempotency, security. */
function completeProcedureOperation(doc: Doc, meta: Meta): void {
  const openapi = meta.openapi;
  if (!openapi) return;
  const method = openapi.method.toLowerCase();
  const operation = (doc.paths?.[openapi.path] as Record<string, Record<string, unknown>> | undefined)?.[method];
  if (!operation) return;
  const responses = operation.responses as Record<string, Record<string, unknown>>;
  const success = responses['200'] ?? { description: 'Successful response' };
  if (meta.successDescription) success.description = meta.successDescription;
  if (meta.nextLink) success.headers = { ...(success.headers as object), Link: headerRef('NextLink') };
  if (meta.csv) {
    success.content = {
      ...(success.content as object),
      'text/csv': {
        schema: {
          type: 'string',
          description:
            "RFC 4180, a header row first; text cells that a spreadsheet would run as a formula start with `'`.",
        },
        example: 'value,events,visitors,visits\r\n/pricing,120,80,95\r\n',
      },
    };
  }
  const successStatus = String(meta.successStatus ?? 200);
  const isPartnerOperation = openapi.protect === true;
  const idempotent = method === 'post' && isPartnerOperation;
  const reasons = [...(meta.errors ?? []), ...layerReasons(method, isPartnerOperation)];
  if (idempotent) {
    operation.parameters = [...((operation.parameters as unknown[] | undefined) ?? []), IDEMPOTENCY_KEY_PARAMETER];
  }
  operation.responses = {
    // 204: no body (the generator always describes one).
    [successStatus]: successStatus === '204' ? { description: 'No content.' } : success,
    ...errorResponses(reasons, isPartnerOperation),
  };
  finishOperation(doc, operation, { rateLimited: true, idempotent, public: !isPartnerOperation });
  if (meta.sessionAccess) operation.security = [{ Authorization: [] }, { MerchantSession: [] }];
}

/** The tags the operations use, sorted, with their descriptions. */
function usedTags(doc: Doc): Doc['tags'] {
  const used = new Set<string>();
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) for (const tag of (operation.tags ?? []) as string[]) used.add(tag);
  }
  return [...used]
    .sort()
    .map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name }));
}
