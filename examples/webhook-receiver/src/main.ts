// A webhook receiver for Partner Tags: a plain node:http server that registers itself with the
// SDK (`client.webhooks.create`), verifies every request with `client.webhooks.unwrap` (Standard
// Webhooks signature, 5-minute timestamp tolerance), answers 2xx and prints the events. It asks for
// a `webhook.test` event right after registering, so the wiring is proven at once; Ctrl-C removes
// the registration.
//
//   PARTNER_API_KEY=mp_test_... pnpm example:webhooks   # server started with WEBHOOK_ALLOW_PRIVATE_URLS=true
//
// A loopback URL (http://127.0.0.1:...) is refused by the API unless the server runs with
// WEBHOOK_ALLOW_PRIVATE_URLS=true (development only): production endpoints are https on a public
// address. Environment: see README.md.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BadRequestError,
  PartnerClient,
  type WebhookEvent,
  type WebhookEventType,
  WebhookVerificationError,
} from '@partner/sdk';

/** Requests larger than this are refused (413): webhook bodies are a few kilobytes. */
const MAX_BODY_BYTES = 1024 * 1024;

function apiKeyFromEnvOrOnboarding(): string | undefined {
  if (process.env.PARTNER_API_KEY) return process.env.PARTNER_API_KEY;
  const file = process.env.PARTNER_ONBOARDING_FILE;
  if (!file) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { apiKey: string }).apiKey;
}

/** The raw body exactly as received: `unwrap` checks the signature over these bytes. */
function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** One line per event. `data` is typed by `type`: the full tag for `tag.*`, as `client.tags.retrieve` returns it. */
function describe(event: WebhookEvent): string {
  if (event.type === 'webhook.test')
    return `webhook=${event.data.webhookId} message=${JSON.stringify(event.data.message)}`;
  if (event.type === 'merchant.deleted')
    return `merchant=${event.data.merchantId} deletedAt=${event.data.deletedAt} purgedAt=${event.data.purgedAt}`;
  if (event.type === 'erasure.completed')
    return `erasure=${event.data.id} merchant=${event.data.merchantId ?? '(all)'} eventsDeleted=${event.data.eventsDeleted}`;
  if (event.type === 'stats.digest') {
    const { summary, week } = event.data;
    return `digest merchant=${event.data.merchantId} week=${week.startDate}..${week.endDate} visitors=${summary.totals.visitors} before=${summary.previous?.totals.visitors ?? '-'}`;
  }
  if (event.type === 'stats.spike')
    return `spike merchant=${event.data.merchantId} hour=${event.data.hour.start} visitors=${event.data.visitors} median=${event.data.median}`;
  const tag = event.data;
  return [
    `tag=${tag.tagId}`,
    `domain=${tag.domain}`,
    `status=${tag.status}`,
    `verified=${tag.isVerified}`,
    `connected=${tag.isConnected}`,
    `firstEventAt=${tag.firstEventAt ?? '-'}`,
  ].join(' ');
}

async function main(): Promise<void> {
  const client = new PartnerClient({
    apiKey: apiKeyFromEnvOrOnboarding(),
    baseURL: process.env.PARTNER_BASE_URL || 'http://localhost:3000',
  });
  const host = process.env.RECEIVER_HOST || '127.0.0.1';
  const port = Number(process.env.RECEIVER_PORT ?? 4000);
  const events = process.env.RECEIVER_EVENTS
    ? (process.env.RECEIVER_EVENTS.split(',').map((type) => type.trim()) as WebhookEventType[])
    : undefined;

  let secret: string | undefined; // known once registered; requests before that are refused (503)
  const seen = new Set<string>(); // webhook-id of handled messages: delivery is at least once

  const server = http.createServer(async (req, res) => {
    const answer = (status: number, text = '') => res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
    if (req.method !== 'POST' || req.url !== '/webhooks') return answer(404, 'not found\n');
    const body = await readBody(req);
    if (!body) return answer(413, 'too large\n');
    if (!secret) return answer(503, 'not registered yet\n'); // not 2xx: the API retries later
    let event: WebhookEvent;
    try {
      event = await client.webhooks.unwrap(body, req.headers, secret);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      console.error(`refused a request: ${error.message}`);
      return answer(400, 'invalid signature\n');
    }
    const id = String(req.headers['webhook-id']);
    // Answer 2xx quickly (within 10 s, or the API counts a failure and retries); do slow work later.
    answer(204);
    if (seen.has(id)) {
      console.log(`duplicate ${event.type} webhook-id=${id} (already handled)`);
      return;
    }
    seen.add(id);
    console.log(`received ${event.type} webhook-id=${id} at=${event.timestamp} ${describe(event)}`);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const { port: actualPort } = server.address() as AddressInfo;
  const url = process.env.RECEIVER_URL || `http://${host}:${actualPort}/webhooks`;
  console.log(`listening on http://${host}:${actualPort}/webhooks`);

  let webhookId: string;
  try {
    const created = await client.webhooks.create({ url, events, description: 'examples/webhook-receiver' });
    webhookId = created.webhookId;
    // null only in a replay (the create's first answer was lost, the SDK's retry got the stored one):
    // secrets are never stored for replays, so a rotation gives one.
    secret = created.secret ?? (await client.webhooks.rotateSecret(webhookId)).secret ?? undefined;
    console.log(`registered webhook ${webhookId} for ${url} (events: ${created.events?.join(', ') ?? 'all'})`);
  } catch (error) {
    if (error instanceof BadRequestError) {
      console.error(`the API refused ${url}: ${error.message}`);
      console.error('Hint: for a loopback or http URL, start the server with WEBHOOK_ALLOW_PRIVATE_URLS=true.');
    }
    server.close();
    throw error;
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: removing webhook ${webhookId}`);
    await client.webhooks.delete(webhookId).catch((error: unknown) => console.error(`could not remove it: ${error}`));
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));

  // Proves the wiring end to end: the API signs and sends a webhook.test event to this receiver.
  const delivery = await client.webhooks.test(webhookId);
  console.log(`asked for a webhook.test event (delivery ${delivery.deliveryId}); waiting for events, Ctrl-C to stop`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
  process.exit(1);
});
