// client.webhooks.unwrap / unwrapWebhook: every bad input (secret, headers, body) is a
// WebhookVerificationError, never a TypeError or Web Crypto's DataError, so a receiver's one
// `catch (e) { if (e instanceof WebhookVerificationError) return 400 }` covers them all.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { PartnerClient, unwrapWebhook, WebhookVerificationError } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const client = new PartnerClient({ apiKey: 'mp_live_test', baseURL: 'http://127.0.0.1:1' });
const body = JSON.stringify({
  type: 'webhook.test',
  timestamp: '2026-11-23T20:00:00.000Z',
  data: { webhookId: 'w', message: 'hi' },
});

function signedHeaders(at = new Date(), id = 'msg_1'): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(SECRET).sign(id, at, body),
  };
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('unwrap refuses malformed input with WebhookVerificationError', () => {
  it('a good request still verifies', async () => {
    await expect(client.webhooks.unwrap(body, signedHeaders(), SECRET)).resolves.toMatchObject({
      type: 'webhook.test',
    });
  });

  it.each([
    ['an empty secret', ''],
    ['the bare prefix', 'whsec_'],
    ['a secret that is not base64', 'whsec_not base64!!'],
    ['a secret of one stray character', 'whsec_a'],
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object', { key: 'whsec_x' }],
  ])('secret: %s', async (_name, secret) => {
    const error = await failure(() => client.webhooks.unwrap(body, signedHeaders(), secret as string));
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as Error).name).toBe('WebhookVerificationError');
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'webhook-id: x'],
    ['a number header value', { ...signedHeaders(), 'webhook-timestamp': 1 }],
    ['an object header value', { ...signedHeaders(), 'webhook-signature': { v1: 'x' } }],
    [
      'a getter that throws',
      {
        get: () => {
          throw new Error('boom');
        },
      },
    ],
    ['an empty signature list', { ...signedHeaders(), 'webhook-signature': '' }],
    ['a signature without a version', { ...signedHeaders(), 'webhook-signature': 'abc' }],
  ])('headers: %s', async (_name, headers) => {
    const error = await failure(() => unwrapWebhook(body, headers as never, SECRET));
    expect(error).toBeInstanceOf(WebhookVerificationError);
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a number', 12],
    ['a parsed object', JSON.parse(body)],
    ['an ArrayBuffer (not a view)', new ArrayBuffer(4)],
  ])('body: %s', async (_name, raw) => {
    const error = await failure(() => unwrapWebhook(raw as never, signedHeaders(), SECRET));
    expect(error).toBeInstanceOf(WebhookVerificationError);
  });

  it('keeps the original failure as the cause when it wraps one', async () => {
    const error = (await failure(() =>
      unwrapWebhook(
        body,
        {
          get: () => {
            throw new RangeError('bad getter');
          },
        },
        SECRET,
      ),
    )) as Error;
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error.cause as Error).message).toBe('bad getter');
  });
});
