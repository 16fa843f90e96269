import { z } from 'zod';

export const Uuid = z.uuid({ message: 'must be a valid UUID' });

/**
 * A boolean in a request body: the literals, not z.boolean(), as trpc-to-openapi coerces booleans by
 * truthiness ('no' -> true). A function: trpc-to-openapi marks the schema it is given, so each
 * input gets its own (and outputs keep z.boolean()).
 */
export const booleanInput = () => z.union([z.literal(true), z.literal(false)], { message: 'must be true or false' });

/** An ISO 8601 UTC timestamp as the API returns it, e.g. `2026-11-22T10:00:00.000Z`. */
export const Timestamp = z.iso.datetime().meta({ example: '2026-11-22T10:00:00.000Z' });

/** API keys issued at onboarding. */
export const API_KEY_PREFIX = 'mp_live_';
export const TEST_API_KEY_PREFIX = 'mp_test_';

/** Every object says which mode it lives in (docs/decisions/test-mode.md). */
export const Livemode = z.boolean().meta({
  description: 'true: live data (reached with an `mp_live_` key); false: test mode (an `mp_test_` key).',
  example: true,
});

/**
 * Generate: a domain without protocol or `www.`, letters/digits/hyphens per label, ending in an
 * alphabetic TLD. The spec's pattern plus punycode TLDs (`xn--p1ai`), see docs/decisions/tags-and-domains.md.
 */
export const ROOT_DOMAIN_PATTERN = /^(?!.*:\/\/)(?!www\.)([a-zA-Z0-9-]+\.)+([a-zA-Z]{2,}|xn--[a-zA-Z0-9-]{2,})$/;

/** Verify: a host name of any depth, no protocol; the spec's pattern plus punycode TLDs. */
export const HOSTNAME_PATTERN = /^(?!.*:\/\/)([a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+\.([a-zA-Z]{2,}|xn--[a-zA-Z0-9-]{2,})$/;

/** A DNS name is at most 253 characters, each label 1..63 and not starting or ending in `-`. */
function hasValidLabels(host: string): boolean {
  if (host.length > 253) return false;
  return host
    .split('.')
    .every((label) => label.length >= 1 && label.length <= 63 && !label.startsWith('-') && !label.endsWith('-'));
}

/** Domain input of `tag/generate`: trimmed, lower-cased, validated by the root-domain pattern. */
export const DomainInput = z
  .string()
  .trim()
  .max(253, { message: 'must be at most 253 characters' })
  .regex(ROOT_DOMAIN_PATTERN, {
    message: 'must be a domain such as example.com, without protocol, www. prefix or path',
  })
  .refine(hasValidLabels, { message: 'has an invalid label (1..63 characters, no leading or trailing hyphen)' })
  .transform((value) => value.toLowerCase())
  .meta({ example: 'example.com' });

/** Host input of `tag/verify`: trimmed, lower-cased, any depth. */
export const HostnameInput = z
  .string()
  .trim()
  .max(253, { message: 'must be at most 253 characters' })
  .regex(HOSTNAME_PATTERN, { message: 'must be a host name such as example.com or shop.example.com, without protocol' })
  .refine(hasValidLabels, { message: 'has an invalid label (1..63 characters, no leading or trailing hyphen)' })
  .transform((value) => value.toLowerCase())
  .meta({ example: 'shop.example.com' });
