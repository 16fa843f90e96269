import { AuthErrorBody, ErrorCode } from '@partner/shared-schemas';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { ERROR_TABLE, type ErrorReason } from '../errors.js';
import { appRouter } from '../routers/_app.js';
import { allProcedureMeta } from './procedure-meta.js';

const REASON_TEXT: Record<ErrorReason, string> = {
  UNAUTHORIZED: 'missing, malformed, unknown or revoked API key',
  VALIDATION_ERROR: 'invalid request parameters or body',
  UNSUPPORTED_MEDIA_TYPE: 'the body is not JSON',
  DNS_VERIFICATION_FAILED: 'the CNAME record is missing or points elsewhere',
  TAG_CONFIGURATION_INCOMPLETE: 'tag configuration incomplete',
  PAYLOAD_TOO_LARGE: 'body over 1 MB',
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
};

const BODY_REASONS: ErrorReason[] = ['UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'];

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
  schemas.ErrorCode = z.toJSONSchema(ErrorCode, { target: 'draft-2020-12' });
  delete (schemas.ErrorCode as Record<string, unknown>).$schema;
  schemas.Error = {
    type: 'object',
    required: ['message', 'code'],
    properties: { message: { type: 'string' }, code: { $ref: '#/components/schemas/ErrorCode' } },
  };
  const authError = z.toJSONSchema(AuthErrorBody, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete authError.$schema;
  delete authError.id;
  schemas.AuthError = authError;
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
    const reasons = [...(meta.errors ?? []), ...(method === 'post' ? BODY_REASONS : [])];
    operation.responses = {
      [successStatus]: success,
      ...errorResponses(reasons, openapi.protect === true),
    };
  }
  return doc;
}
