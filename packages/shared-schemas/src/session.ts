import { z } from 'zod';
import { Timestamp, Uuid } from './common.js';

/** Merchant session tokens: `ms_` + 32 base64url characters, shown once. */
export const SESSION_TOKEN_PREFIX = 'ms_';
export const SESSION_LIFETIME_DEFAULT_SECONDS = 900;
export const SESSION_LIFETIME_MAX_SECONDS = 3600;
export const SESSION_LIFETIME_MIN_SECONDS = 1;
export const SESSION_ORIGINS_MAX = 10;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * A browser origin as the `Origin` header sends it, or null: scheme, host and optional port, no
 * path, query, fragment or credentials; `https`, or `http` for localhost and 127.0.0.1 only.
 * Answered in the form browsers send (lower-cased host, default port dropped), so that a session's
 * origins compare exactly with the header.
 */
export function normalizeOrigin(value: string): string | null {
  const match = /^(https?):\/\/([^/?#@\s\\]+)\/?$/i.exec(value);
  if (!match) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || !url.hostname) return null;
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return null;
  return url.origin;
}

const AllowedOrigin = z
  .string()
  .max(300)
  .transform((value, ctx) => {
    const origin = normalizeOrigin(value);
    if (origin === null) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be an origin: https://host[:port] with no path (http only for localhost and 127.0.0.1)',
      });
      return z.NEVER;
    }
    return origin;
  })
  .meta({ example: 'https://admin.partner.example' });

export const CreateMerchantSessionInput = z
  .object({
    merchantId: Uuid.meta({
      description: 'The merchant (UUID, one of the partner’s) the session may read.',
      example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
    }),
    allowedOrigins: z
      .array(AllowedOrigin)
      .min(1, { message: 'must list at least one origin' })
      .max(SESSION_ORIGINS_MAX, { message: `must list at most ${SESSION_ORIGINS_MAX} origins` })
      .transform((origins) => [...new Set(origins)])
      .meta({
        description:
          'The exact browser origins (`https://host[:port]`, no path; `http` only for localhost and 127.0.0.1) whose pages may use the token: only these get CORS headers.',
        example: ['https://admin.partner.example'],
      }),
    lifetimeSeconds: z
      .number()
      .int({ message: 'must be a whole number of seconds' })
      .min(SESSION_LIFETIME_MIN_SECONDS, { message: `must be at least ${SESSION_LIFETIME_MIN_SECONDS}` })
      .max(SESSION_LIFETIME_MAX_SECONDS, { message: `must be at most ${SESSION_LIFETIME_MAX_SECONDS}` })
      // A pipe: trpc-to-openapi coerces a bare number of a REST body ("900" and true would pass).
      .transform((seconds) => seconds)
      .optional()
      .meta({
        description: `How long the token is valid, in seconds (default ${SESSION_LIFETIME_DEFAULT_SECONDS}, at most ${SESSION_LIFETIME_MAX_SECONDS}).`,
        example: SESSION_LIFETIME_DEFAULT_SECONDS,
      }),
  })
  .meta({ id: 'CreateMerchantSessionInput' });
export type CreateMerchantSessionInput = z.input<typeof CreateMerchantSessionInput>;

export const MerchantSession = z
  .object({
    token: z.string().meta({
      description:
        'The session token (`ms_...`), shown once: hand it to the browser, which sends it as `Authorization: Bearer ms_...`.',
      example: 'ms_Vq3xN8b2LkT0pYc7Hf5sWm1gRz9dJe4A',
    }),
    merchantId: Uuid.meta({ example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c' }),
    allowedOrigins: z.array(z.string()).meta({ example: ['https://admin.partner.example'] }),
    expiresAt: Timestamp.meta({ description: 'When the token stops working (UTC).' }),
  })
  .meta({ id: 'MerchantSession' });
export type MerchantSession = z.infer<typeof MerchantSession>;
