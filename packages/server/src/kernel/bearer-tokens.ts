/** The bearer tokens partners send: API keys and merchant session tokens. */
import * as crypto from 'node:crypto';
import { API_KEY_PREFIX, SESSION_TOKEN_PREFIX, TEST_API_KEY_PREFIX } from '@partner/shared-schemas';

/** 32 base64url characters after the prefix: 192 random bits (keys and session tokens alike). */
const KEY_SECRET_BYTES = 24;
const KEY_PATTERN = /^mp_(live|test)_[A-Za-z0-9_-]{32}$/;
const SESSION_TOKEN_PATTERN = /^ms_[A-Za-z0-9_-]{32}$/;
/** Characters of the key kept in clear for listings: the prefix and four secret characters. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;

export interface NewApiKey {
  key: string;
  hash: string;
  prefix: string;
}

const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/** SHA-256 of the key, hex: what api_keys stores. Runs on every partner request. */
export function hashApiKey(key: string): string {
  if (oneShotHash) return oneShotHash('sha256', key, 'hex');
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateApiKey(mode: 'live' | 'test' = 'live'): NewApiKey {
  const key = `${mode === 'live' ? API_KEY_PREFIX : TEST_API_KEY_PREFIX}${crypto.randomBytes(KEY_SECRET_BYTES).toString('base64url')}`;
  return { key, hash: hashApiKey(key), prefix: key.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/** True when the token has the shape of one of our keys (checked before any database lookup). */
export function isWellFormedApiKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}

/** Constant-time comparison of two hex digests. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

/** A new merchant session token and its SHA-256 (what merchant_sessions stores). */
export function generateSessionToken(): { token: string; hash: string } {
  const token = `${SESSION_TOKEN_PREFIX}${crypto.randomBytes(KEY_SECRET_BYTES).toString('base64url')}`;
  return { token, hash: hashApiKey(token) };
}

/** True when the token has the shape of a merchant session token (checked before any lookup). */
export function isWellFormedSessionToken(token: string): boolean {
  return SESSION_TOKEN_PATTERN.test(token);
}

/** Extracts the token of an `Authorization: Bearer <token>` header; `null` when no token was sent. */
export function bearerToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value || value.trim() === '') return null;
  const match = /^Bearer\s+(.*)$/i.exec(value.trim());
  if (!match) return value.trim();
  return match[1]?.trim() || null;
}
