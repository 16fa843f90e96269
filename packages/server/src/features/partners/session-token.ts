import * as crypto from 'node:crypto';
import { SESSION_TOKEN_PREFIX } from '@partner/shared-schemas';
import { hashApiKey } from './key-hash.js';

/** 32 base64url characters after the prefix: 192 random bits, as API keys. */
const TOKEN_SECRET_BYTES = 24;
const TOKEN_PATTERN = /^ms_[A-Za-z0-9_-]{32}$/;

/** A new merchant session token and its SHA-256 (what merchant_sessions stores). */
export function generateSessionToken(): { token: string; hash: string } {
  const token = `${SESSION_TOKEN_PREFIX}${crypto.randomBytes(TOKEN_SECRET_BYTES).toString('base64url')}`;
  return { token, hash: hashApiKey(token) };
}

/** True when the token has the shape of a merchant session token (checked before any lookup). */
export function isWellFormedSessionToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}
