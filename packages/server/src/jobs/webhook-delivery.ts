import { Agent, request } from 'undici';
import type { DatabaseHandle } from '../db/client.js';
import { classifyDeliveryFailure } from '../features/webhooks/delivery-errors.js';
import {
  type AttemptOutcome,
  attemptStatus,
  type ClaimedDelivery,
  claimDueDeliveries,
  recordAttempt,
  releaseClaims,
} from '../features/webhooks/delivery-queue.js';
import { WEBHOOK_WAKE_CHANNEL } from '../features/webhooks/outbox.js';
import { signWebhook } from '../features/webhooks/signing.js';
import { checkWebhookUrlSyntax, safeLookup } from '../features/webhooks/url-safety.js';
import type { Env } from '../kernel/env.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { WebhookHostResolver } from '../runtime/webhook-host-resolver.js';
import { EndpointAnswers } from './endpoint-answers.js';
import { createPollLoop } from './poll-loop.js';

export type WebhookDeliveryConfig = Pick<
  Env,
  | 'WEBHOOK_RETRY_SCHEDULE'
  | 'WEBHOOK_ALLOW_PRIVATE_URLS'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_CONCURRENCY'
  | 'WEBHOOK_ENDPOINT_CONCURRENCY'
  | 'WEBHOOK_POLL_MS'
  | 'WEBHOOK_PARTNER_CONCURRENCY'
>;

export interface WebhookDeliveryWorker {
  start(): Promise<void>;
  /** Stops claiming, waits for the requests in flight (each ends by its deadline), gives back the rest. */
  stop(): Promise<void>;
  /** Looks for due deliveries now. */
  wake(): void;
}

const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'PartnerTags-Webhooks/1.0';

/**
 * The delivery worker (one per process): claims due deliveries (features/webhooks/delivery-queue.ts),
 * POSTs each signed body to its endpoint with a deadline, and records the outcome. Woken by the
 * outbox's NOTIFY at commit and by its own poll interval. In flight at once: WEBHOOK_CONCURRENCY per
 * process, WEBHOOK_ENDPOINT_CONCURRENCY per endpoint once it answers (endpoint-answers.ts: one
 * request at a time to an endpoint not heard from yet, or whose last attempt got no answer), so an
 * endpoint that never answers holds one slot of WEBHOOK_TIMEOUT_MS at a time and everyone else's
 * deliveries keep the rest.
 */
export function createWebhookDeliveryWorker(
  database: Pick<DatabaseHandle, 'db' | 'listen'>,
  config: WebhookDeliveryConfig,
  logger: Logger,
  metrics?: Metrics,
  /** The app's webhook host resolver (AppDeps.webhookResolver); absent: one of the worker's own. */
  resolver?: WebhookHostResolver,
): WebhookDeliveryWorker {
  const { db } = database;
  // Attempts by what they made of their delivery: succeeded, retried (failed, another attempt
  // scheduled), failed (failed with no attempt left). An attempt whose lease was lost counts nowhere.
  const deliveries = metrics?.counter({
    name: 'partner_tags_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: succeeded, retried (failed, retry scheduled), failed (no retry left)',
    labelNames: ['outcome'] as const,
  });
  for (const outcome of ['succeeded', 'retried', 'failed']) deliveries?.inc({ outcome }, 0);
  const log = logger.child({ worker: 'webhook-delivery' });
  const timeoutMs = config.WEBHOOK_TIMEOUT_MS;
  const perEndpoint = config.WEBHOOK_ENDPOINT_CONCURRENCY;
  // A claim may wait in this process behind its endpoint's other requests: the lease covers that.
  const leaseMs = 3 * timeoutMs + 5_000;
  // Without the app's resolver: DNS_TIMEOUT_MS's default, a few lookups at once.
  const safety = {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    resolver: resolver ?? new WebhookHostResolver({ timeoutMs: 3000, maxInFlight: 4 }),
  };
  const agent = new Agent({
    connect: { lookup: safeLookup(safety) as never, timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: perEndpoint,
    keepAliveTimeout: 10_000,
  });

  let inFlight = 0;
  const sendingByEndpoint = new Map<string, number>();
  const waitingByEndpoint = new Map<string, ClaimedDelivery[]>();
  // One request at a time to an endpoint until it answers, and again after an attempt got none.
  // An attempt that held its slot to the deadline backs its endpoint off, from one timeout up to 10 minutes.
  const answers = new EndpointAnswers(perEndpoint, 10_000, timeoutMs, 600_000);
  // Partners take turns for this process's slots (delivery-queue.ts, claimStatement).
  const partnerOf = new Map<string, string>();
  metrics?.gaugeOf(
    'partner_tags_webhook_endpoints_probing',
    'Webhook endpoints this process sends one request at a time because their last attempt got no answer',
    () => answers.silentCount,
  );
  const running = new Set<Promise<void>>();
  let unlisten: (() => Promise<void>) | undefined;

  /** The outcome to record (its error a class, features/webhooks/delivery-errors.ts) and, for the log only, the detail. */
  async function attempt(claim: ClaimedDelivery): Promise<AttemptOutcome & { detail?: string }> {
    try {
      const url = checkWebhookUrlSyntax(claim.url, safety);
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signWebhook(claim.secrets, claim.messageId, new Date(), claim.body),
      };
      const response = await request(url, {
        method: 'POST',
        body: claim.body,
        headers,
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {});
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, statusCode: response.statusCode, error: ok ? null : 'http_status' };
    } catch (error) {
      // A URL that fails the rules at send time (stored before a rule changed) is `blocked_address`
      // like a refused address; the partner sees the class, the log the detail.
      const { errorClass, detail } = classifyDeliveryFailure(error);
      return { ok: false, statusCode: null, error: errorClass, detail };
    }
  }

  /** An answer (any status) lifts the endpoint to its full limit; no answer (not a refusal by our URL rules) drops it to one. */
  function noteAnswer(claim: ClaimedDelivery, outcome: AttemptOutcome) {
    if (outcome.statusCode === null && outcome.error === 'blocked_address') return;
    const change = answers.note(claim.endpointId, outcome.statusCode !== null);
    if (change === 'answering') log.info({ webhookId: claim.endpointId }, 'webhook endpoint answers again');
    if (change === 'silent') {
      log.warn(
        { webhookId: claim.endpointId, error: outcome.error },
        'webhook endpoint did not answer: one request at a time until it does',
      );
    }
  }

  function startSend(claim: ClaimedDelivery) {
    inFlight++;
    sendingByEndpoint.set(claim.endpointId, (sendingByEndpoint.get(claim.endpointId) ?? 0) + 1);
    const task = (async () => {
      const started = Date.now();
      const outcome = await attempt(claim);
      noteAnswer(claim, outcome);
      // No answer after at least half the deadline: the attempt held its slot; the endpoint backs off.
      if (outcome.statusCode === null && Date.now() - started >= timeoutMs / 2) {
        const backoffMs = answers.noteTimedOut(claim.endpointId);
        log.info({ webhookId: claim.endpointId, backoffMs }, 'webhook endpoint backs off: its attempt timed out');
      }
      try {
        const recorded = await recordAttempt(db, claim, outcome, config.WEBHOOK_RETRY_SCHEDULE);
        if (recorded) {
          const status = attemptStatus(claim, outcome, config.WEBHOOK_RETRY_SCHEDULE);
          deliveries?.inc({ outcome: status === 'pending' ? 'retried' : status });
        }
        if (!recorded)
          log.warn({ deliveryId: claim.deliveryId }, 'delivery lease lost before the outcome was recorded');
      } catch (error) {
        // The lease runs out and the delivery is sent again: at least once.
        log.error({ err: error, deliveryId: claim.deliveryId }, 'recording a delivery attempt failed');
      }
      if (!outcome.ok) {
        log.info(
          {
            deliveryId: claim.deliveryId,
            webhookId: claim.endpointId,
            statusCode: outcome.statusCode,
            error: outcome.error,
            detail: outcome.detail,
          },
          'webhook delivery attempt failed',
        );
      }
    })().finally(() => {
      running.delete(task);
      inFlight--;
      const left = (sendingByEndpoint.get(claim.endpointId) ?? 1) - 1;
      if (left === 0) sendingByEndpoint.delete(claim.endpointId);
      else sendingByEndpoint.set(claim.endpointId, left);
      startWaiting(claim.endpointId);
      loop.wake();
    });
    running.add(task);
  }

  /** Sends the endpoint's waiting claims its limit allows; gives back the rest of a probed endpoint's. */
  function startWaiting(endpointId: string) {
    const waiting = waitingByEndpoint.get(endpointId);
    if (!waiting) return;
    while (
      waiting.length > 0 &&
      loop.running &&
      (sendingByEndpoint.get(endpointId) ?? 0) < answers.limitOf(endpointId)
    ) {
      startSend(waiting.shift() as ClaimedDelivery);
    }
    if (waiting.length > 0 && (!loop.running || answers.limitOf(endpointId) === 1)) {
      void releaseClaims(db, waiting.splice(0)).catch(() => {});
    }
    if (waiting.length === 0) waitingByEndpoint.delete(endpointId);
  }

  function dispatch(claim: ClaimedDelivery) {
    partnerOf.set(claim.endpointId, claim.partnerId);
    if ((sendingByEndpoint.get(claim.endpointId) ?? 0) < answers.limitOf(claim.endpointId)) startSend(claim);
    // Beyond one request to an endpoint not answering (or not heard from yet) the claim is given
    // back at once: waiting here, it would hold a slot of this process for a whole timeout.
    else if (answers.limitOf(claim.endpointId) === 1) void releaseClaims(db, [claim]).catch(() => {});
    else waitingByEndpoint.set(claim.endpointId, [...(waitingByEndpoint.get(claim.endpointId) ?? []), claim]);
  }

  const loop = createPollLoop({
    name: 'webhook-delivery',
    intervalMs: config.WEBHOOK_POLL_MS,
    runTimeoutMs: 10_000,
    logger: log,
    run: async () => {
      let waiting = 0;
      for (const list of waitingByEndpoint.values()) waiting += list.length;
      const free = config.WEBHOOK_CONCURRENCY - inFlight - waiting;
      if (free <= 0) return false;
      const skipEndpoints = [...sendingByEndpoint.entries()]
        .filter(([id, n]) => n >= answers.limitOf(id))
        .map(([id]) => id)
        .concat(answers.coolingIds());
      // Claims held here per partner (sending and waiting), for the partners' turns and shares.
      const held = new Map<string, number>();
      for (const [id, n] of sendingByEndpoint) {
        const partnerId = partnerOf.get(id);
        if (partnerId) held.set(partnerId, (held.get(partnerId) ?? 0) + n);
      }
      for (const [id, list] of waitingByEndpoint) {
        const partnerId = partnerOf.get(id);
        if (partnerId) held.set(partnerId, (held.get(partnerId) ?? 0) + list.length);
      }
      for (const id of partnerOf.keys()) {
        if (!sendingByEndpoint.has(id) && !waitingByEndpoint.has(id)) partnerOf.delete(id);
      }
      const claims = await claimDueDeliveries(db, {
        limit: free,
        perEndpoint,
        leaseMs,
        skipEndpoints,
        probing: answers.silentIds(),
        fairness: { slots: config.WEBHOOK_CONCURRENCY, perPartner: config.WEBHOOK_PARTNER_CONCURRENCY, held },
      });
      for (const claim of claims) dispatch(claim);
      return claims.length === free;
    },
  });

  return {
    async start() {
      unlisten = await database.listen(WEBHOOK_WAKE_CHANNEL, () => loop.wake());
      loop.start();
    },
    wake: () => loop.wake(),
    async stop() {
      await loop.stop();
      const waiting = [...waitingByEndpoint.values()].flat();
      waitingByEndpoint.clear();
      await Promise.allSettled([...running]);
      await releaseClaims(db, waiting).catch(() => {});
      await unlisten?.().catch(() => {});
      await agent.close().catch(() => {});
    },
  };
}
