import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@partner/shared-schemas';
import { Webhook } from 'standardwebhooks';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks headers for one attempt, signed with the `standardwebhooks` library:
 * `webhook-signature` holds one `v1,<base64>` per secret, space separated (two while a rotated
 * secret is still valid).
 */
export function signWebhook(
  secrets: string[],
  messageId: string,
  sentAt: Date,
  body: string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, sentAt, body)).join(' '),
  };
}
