import { AuthErrorBody, ErrorCode } from '@partner/shared-schemas';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { ERROR_TABLE, type ErrorReason } from '../errors.js';
import { appRouter } from '../routers/_app.js';
import { addEventStreamOperation } from './openapi-stream.js';
import { allProcedureMeta } from './procedure-meta.js';

const REASON_TEXT: Record<ErrorReason, string> = {
  UNAUTHORIZED: 'missing, malformed, unknown or revoked API key',
  VALIDATION_ERROR: 'invalid request parameters or body',
  UNSUPPORTED_MEDIA_TYPE: 'the body is not JSON',
  DNS_VERIFICATION_FAILED: 'the CNAME record is missing or points elsewhere',
  TAG_CONFIGURATION_INCOMPLETE: 'tag configuration incomplete',
  PAYLOAD_TOO_LARGE: 'body over 1 MB',
  REQUEST_HEADERS_TOO_LARGE: 'request line or headers over 16 KB',
  URI_TOO_LONG: 'request URL over 8 KB',
  REQUEST_TIMEOUT: 'request not received in time',
  ACCESS_DENIED: "the tag belongs to another partner's merchant",
  MERCHANT_NOT_FOUND: "the merchant does not exist, is another partner's, or has no tag",
  TAG_NOT_FOUND: 'the tag does not exist',
  INTEGRATION_NOT_FOUND: 'no tag integration found',
  NOT_FOUND: 'unknown path',
  TAG_NOT_LIVE: 'the tag does not take events yet (custom domain not verified)',
  IDEMPOTENCY_KEY_REUSED: 'the Idempotency-Key was used with another request',
  RATE_LIMITED: 'too many requests',
  DATABASE_ERROR: 'a database operation failed (retry with backoff)',
  INTERNAL: 'the request could not be processed',
  SERVICE_UNAVAILABLE: 'a dependency is unavailable (retry with backoff)',
  EXTERNAL_SERVICE_ERROR: 'the DNS verification service is unavailable (retry with backoff)',
  STREAM_CONSUMER_TOO_SLOW: 'the stream consumer fell too far behind (final `error` event; resume with the last id)',
};

const BODY_REASONS: ErrorReason[] = ['UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'];

/** Failures the HTTP layer adds to every operation (rate limits) and to partner POSTs (idempotency). */
function layerReasons(method: string, isPartnerOperation: boolean): ErrorReason[] {
  const reasons: ErrorReason[] = ['RATE_LIMITED'];
  if (method === 'post') reasons.push(...BODY_REASONS);
  if (method === 'post' && isPartnerOperation) reasons.push('IDEMPOTENCY_KEY_REUSED');
  return reasons;
}

const IDEMPOTENCY_KEY_PARAMETER = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes a retried POST safe: the first response for a key is stored for 24 h and replayed for the same ' +
    'request; the same key with another request answers 409 IDEMPOTENCY_KEY_REUSED.',
  schema: { type: 'string', maxLength: 255 },
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
    responses[String(status)] = { description, content: { 'application/json': { schema } } };
  }
  return responses;
}

/**
 * A zod schema as a component: a schema registered with an id comes out of `toJSONSchema` as
 * `{ $ref: '#/$defs/X', $defs: { X } }`, a pointer that resolves against the document's root (where
 * there is no `$defs`) once placed in `components`; unwrap it (and drop `$schema` and `id`).
 */
function componentSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  const defs = json.$defs as Record<string, Record<string, unknown>> | undefined;
  const ref = typeof json.$ref === 'string' ? /^#\/\$defs\/([^/]+)$/.exec(json.$ref)?.[1] : undefined;
  const out = { ...(ref && defs?.[ref] && Object.keys(defs).length === 1 ? defs[ref] : json) };
  delete out.$schema;
  delete out.id;
  return out;
}

/**
 * The OpenAPI 3.1 document, generated from the procedures and corrected where the generator
 * cannot tell the truth: success statuses (201, 202), the `{ message, code }` error body, and each
 * operation's own error statuses.
 */
export function buildOpenApiDocument(baseUrl: string): ReturnType<typeof generateOpenApiDocument> {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Partner Tags API',
    version: '1.0.0',
    description:
      'Partners register merchants, generate tracking tags for merchant domains, verify custom domains in DNS ' +
      'and read the tracking events collected for a merchant. Authenticate with `Authorization: Bearer mp_live_...`.',
    baseUrl,
  });
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  schemas.ErrorCode = componentSchema(ErrorCode);
  schemas.Error = {
    type: 'object',
    required: ['message', 'code'],
    properties: { message: { type: 'string' }, code: { $ref: '#/components/schemas/ErrorCode' } },
  };
  schemas.AuthError = componentSchema(AuthErrorBody);
  doc.components = {
    ...doc.components,
    schemas: schemas as never,
    securitySchemes: {
      Authorization: {
        type: 'http',
        scheme: 'bearer',
        description: 'The API key issued at onboarding, `mp_live_...`.',
      },
    },
  };

  for (const { meta } of allProcedureMeta()) {
    const openapi = meta.openapi;
    if (!openapi) continue;
    const method = openapi.method.toLowerCase();
    const operation = (doc.paths?.[openapi.path] as Record<string, Record<string, unknown>> | undefined)?.[method];
    if (!operation) continue;
    const responses = operation.responses as Record<string, unknown>;
    const success = responses['200'];
    const successStatus = String(meta.successStatus ?? 200);
    const isPartnerOperation = openapi.protect === true;
    const reasons = [...(meta.errors ?? []), ...layerReasons(method, isPartnerOperation)];
    if (method === 'post' && isPartnerOperation) {
      operation.parameters = [...((operation.parameters as unknown[] | undefined) ?? []), IDEMPOTENCY_KEY_PARAMETER];
    }
    operation.responses = {
      [successStatus]: success,
      ...errorResponses(reasons, isPartnerOperation),
    };
  }
  addEventStreamOperation(doc, errorResponses);
  return doc;
}
