import type { Counter } from 'prom-client';
import type { DatabaseHandle } from '../db/client.js';
import {
  type AttemptOutcome,
  attemptStatus,
  type ClaimedDelivery,
  claimDueDeliveries,
  recordAttempt,
  releaseClaims,
} from '../features/webhooks/delivery-queue.js';
import { WEBHOOK_WAKE_CHANNEL } from '../features/webhooks/outbox.js';
import type { Env } from '../kernel/env.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import type { WebhookHostResolver } from '../runtime/webhook-host-resolver.js';
import { EndpointAnswers } from './endpoint-answers.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';
import { WebhookSender } from './webhook-sender.js';

export type WebhookDeliveryConfig = Pick<
  Env,
  | 'WEBHOOK_RETRY_SCHEDULE'
  | 'WEBHOOK_ALLOW_PRIVATE_URLS'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_CONCURRENCY'
  | 'WEBHOOK_ENDPOINT_CONCURRENCY'
  | 'knobs'
  | 'WEBHOOK_PARTNER_CONCURRENCY'
>;

export interface WebhookDeliveryWorker {
  start(): Promise<void>;
  /** Stops claiming, waits for the requests in flight (each ends by its deadline), gives back the rest. */
  stop(): Promise<void>;
  /** Looks for due deliveries now. */
  wake(): void;
}

/** The delivery worker: claims due deliveries, POSTs each signed body to its endpoint with a deadline. */
export function createWebhookDeliveryWorker(
  database: Pick<DatabaseHandle, 'db' | 'listen'>,
  config: WebhookDeliveryConfig,
  logger: Logger,
  metrics?: Metrics,
  /** The app's webhook host resolver (AppDeps.webhookResolver); absent: one of the worker's own. */
  resolver?: WebhookHostResolver,
): WebhookDeliveryWorker {
  return new DeliveryWorker(database, config, logger, metrics, resolver);
}

class DeliveryWorker implements WebhookDeliveryWorker {
  private readonly db: DatabaseHandle['db'];
  private readonly deliveries: Counter<'outcome'> | undefined;
  private readonly log: Logger;
  private readonly timeoutMs: number;
  private readonly perEndpoint: number;
  private readonly leaseMs: number;
  private readonly sender: WebhookSender;
  private readonly answers: EndpointAnswers;
  private readonly loop: PollLoop;
  private inFlight = 0;
  private readonly sendingByEndpoint = new Map<string, number>();
  private readonly waitingByEndpoint = new Map<string, ClaimedDelivery[]>();
  // Partners take turns for this process's slots (delivery-queue.ts, claimStatement).
  private readonly partnerOf = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly database: Pick<DatabaseHandle, 'db' | 'listen'>,
    private readonly config: WebhookDeliveryConfig,
    logger: Logger,
    metrics: Metrics | undefined,
    resolver: WebhookHostResolver | undefined,
  ) {
    this.db = database.db;
    // Attempts by what they made of their delivery: succeeded, retried (failed, another attempt
    // scheduled), failed (failed with no attempt left). An attempt whose lease was lost counts nowhere.
    this.deliveries = metrics?.counter({
      name: 'partner_tags_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: succeeded, retried (failed, retry scheduled), failed (no retry left)',
      labelNames: ['outcome'] as const,
    });
    for (const outcome of ['succeeded', 'retried', 'failed']) this.deliveries?.inc({ outcome }, 0);
    this.log = logger.child({ worker: 'webhook-delivery' });
    this.timeoutMs = config.WEBHOOK_TIMEOUT_MS;
    this.perEndpoint = config.WEBHOOK_ENDPOINT_CONCURRENCY;
    // A claim may wait in this process behind its endpoint's other requests: the lease covers that.
    this.leaseMs = 3 * this.timeoutMs + 5_000;
    this.sender = new WebhookSender({
      timeoutMs: this.timeoutMs,
      perEndpoint: this.perEndpoint,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
      resolver,
    });
    // One request at a time to an endpoint until it answers, and again after an attempt got none.
    // An attempt that held its slot to the deadline backs its endpoint off, from one timeout up to 10 minutes.
    this.answers = new EndpointAnswers(this.perEndpoint, 10_000, this.timeoutMs, 600_000);
    metrics?.gaugeOf(
      'partner_tags_webhook_endpoints_probing',
      'Webhook endpoints this process sends one request at a time because their last attempt got no answer',
      () => this.answers.silentCount,
    );
    this.loop = createPollLoop({
      name: 'webhook-delivery',
      intervalMs: config.knobs.webhookPollMs,
      runTimeoutMs: 10_000,
      logger: this.log,
      run: () => this.claimAndDispatch(),
    });
  }

  async start(): Promise<void> {
    this.unlisten = await this.database.listen(WEBHOOK_WAKE_CHANNEL, () => this.loop.wake());
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    const waiting = [...this.waitingByEndpoint.values()].flat();
    this.waitingByEndpoint.clear();
    await Promise.allSettled([...this.running]);
    await releaseClaims(this.db, waiting).catch(() => {});
    await this.unlisten?.().catch(() => {});
    await this.sender.close().catch(() => {});
  }

  /** One run of the loop: claims what the free slots allow; true when it filled them (run again). */
  private async claimAndDispatch(): Promise<boolean> {
    let waiting = 0;
    for (const list of this.waitingByEndpoint.values()) waiting += list.length;
    const free = this.config.WEBHOOK_CONCURRENCY - this.inFlight - waiting;
    if (free <= 0) return false;
    const skipEndpoints = [...this.sendingByEndpoint.entries()]
      .filter(([id, n]) => n >= this.answers.limitOf(id))
      .map(([id]) => id)
      .concat(this.answers.coolingIds());
    const held = this.heldByPartner();
    const claims = await claimDueDeliveries(this.db, {
      limit: free,
      perEndpoint: this.perEndpoint,
      leaseMs: this.leaseMs,
      skipEndpoints,
      probing: this.answers.silentIds(),
      fairness: {
        slots: this.config.WEBHOOK_CONCURRENCY,
        perPartner: this.config.WEBHOOK_PARTNER_CONCURRENCY,
        held,
      },
    });
    for (const claim of claims) this.dispatch(claim);
    return claims.length === free;
  }

  /** Claims held here per partner (sending and waiting), for the partners' turns and shares. */
  private heldByPartner(): Map<string, number> {
    const held = new Map<string, number>();
    for (const [id, n] of this.sendingByEndpoint) {
      const partnerId = this.partnerOf.get(id);
      if (partnerId) held.set(partnerId, (held.get(partnerId) ?? 0) + n);
    }
    for (const [id, list] of this.waitingByEndpoint) {
      const partnerId = this.partnerOf.get(id);
      if (partnerId) held.set(partnerId, (held.get(partnerId) ?? 0) + list.length);
    }
    for (const id of this.partnerOf.keys()) {
      if (!this.sendingByEndpoint.has(id) && !this.waitingByEndpoint.has(id)) this.partnerOf.delete(id);
    }
    return held;
  }

  private dispatch(claim: ClaimedDelivery): void {
    this.partnerOf.set(claim.endpointId, claim.partnerId);
    if (this.sendingOf(claim.endpointId) < this.answers.limitOf(claim.endpointId)) this.startSend(claim);
    // Beyond one request to an endpoint not answering (or not heard from yet) the claim is given
    // back at once: waiting here, it would hold a slot of this process for a whole timeout.
    else if (this.answers.limitOf(claim.endpointId) === 1) void releaseClaims(this.db, [claim]).catch(() => {});
    else {
      this.waitingByEndpoint.set(claim.endpointId, [...(this.waitingByEndpoint.get(claim.endpointId) ?? []), claim]);
    }
  }

  private sendingOf(endpointId: string): number {
    return this.sendingByEndpoint.get(endpointId) ?? 0;
  }

  private startSend(claim: ClaimedDelivery): void {
    this.inFlight++;
    this.sendingByEndpoint.set(claim.endpointId, this.sendingOf(claim.endpointId) + 1);
    const task: Promise<void> = this.send(claim).finally(() => this.sent(claim, task));
    this.running.add(task);
  }

  private async send(claim: ClaimedDelivery): Promise<void> {
    const started = Date.now();
    const outcome = await this.sender.attempt(claim);
    this.noteAnswer(claim, outcome);
    // No answer after at least half the deadline: the attempt held its slot; the endpoint backs off.
    if (outcome.statusCode === null && Date.now() - started >= this.timeoutMs / 2) {
      const backoffMs = this.answers.noteTimedOut(claim.endpointId);
      this.log.info({ webhookId: claim.endpointId, backoffMs }, 'webhook endpoint backs off: its attempt timed out');
    }
    await this.record(claim, outcome);
    if (!outcome.ok) {
      this.log.info(
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
  }

  private async record(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    try {
      const recorded = await recordAttempt(this.db, claim, outcome, this.config.WEBHOOK_RETRY_SCHEDULE);
      if (recorded) {
        const status = attemptStatus(claim, outcome, this.config.WEBHOOK_RETRY_SCHEDULE);
        this.deliveries?.inc({ outcome: status === 'pending' ? 'retried' : status });
      }
      if (!recorded) {
        this.log.warn({ deliveryId: claim.deliveryId }, 'delivery lease lost before the outcome was recorded');
      }
    } catch (error) {
      // The lease runs out and the delivery is sent again: at least once.
      this.log.error({ err: error, deliveryId: claim.deliveryId }, 'recording a delivery attempt failed');
    }
  }

  /** A send ended: its slots free, its endpoint's waiting claims may go, the loop may claim more. */
  private sent(claim: ClaimedDelivery, task: Promise<void>): void {
    this.running.delete(task);
    this.inFlight--;
    const left = (this.sendingByEndpoint.get(claim.endpointId) ?? 1) - 1;
    if (left === 0) this.sendingByEndpoint.delete(claim.endpointId);
    else this.sendingByEndpoint.set(claim.endpointId, left);
    this.startWaiting(claim.endpointId);
    this.loop.wake();
  }

  /** Sends the endpoint's waiting claims its limit allows; gives back the rest of a probed endpoint's. */
  private startWaiting(endpointId: string): void {
    const waiting = this.waitingByEndpoint.get(endpointId);
    if (!waiting) return;
    while (waiting.length > 0 && this.loop.running && this.sendingOf(endpointId) < this.answers.limitOf(endpointId)) {
      this.startSend(waiting.shift() as ClaimedDelivery);
    }
    if (waiting.length > 0 && (!this.loop.running || this.answers.limitOf(endpointId) === 1)) {
      void releaseClaims(this.db, waiting.splice(0)).catch(() => {});
    }
    if (waiting.length === 0) this.waitingByEndpoint.delete(endpointId);
  }

  /** An answer (any status) lifts the endpoint to its full limit; no answer (not a refusal by our URL rules) drops it to one. */
  private noteAnswer(claim: ClaimedDelivery, outcome: AttemptOutcome): void {
    if (outcome.statusCode === null && outcome.error === 'blocked_address') return;
    const change = this.answers.note(claim.endpointId, outcome.statusCode !== null);
    if (change === 'answering') this.log.info({ webhookId: claim.endpointId }, 'webhook endpoint answers again');
    if (change === 'silent') {
      this.log.warn(
        { webhookId: claim.endpointId, error: outcome.error },
        'webhook endpoint did not answer: one request at a time until it does',
      );
    }
  }
}
