import { Agent, request } from 'undici';
import { classifyDeliveryFailure } from '../features/webhooks/delivery-errors.js';
import type { AttemptOutcome, ClaimedDelivery } from '../features/webhooks/delivery-queue.js';
import { signWebhook } from '../features/webhooks/signing.js';
import { checkWebhookUrlSyntax, safeLookup } from '../features/webhooks/url-safety.js';
import { WebhookHostResolver } from '../runtime/webhook-host-resolver.js';

const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'PartnerTags-Webhooks/1.0';

export interface WebhookSenderOptions {
  timeoutMs: number;
  /** Connections kept per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint: number;
  allowPrivate: boolean;
  /** The app's webhook host resolver (AppDeps.webhookResolver); absent: one of the sender's own. */
  resolver?: WebhookHostResolver | undefined;
}

/** One signed POST per attempt, through an agent whose lookups follow the webhook URL rules. */
export class WebhookSender {
  private readonly safety: { allowPrivate: boolean; resolver: WebhookHostResolver };
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(options: WebhookSenderOptions) {
    this.timeoutMs = options.timeoutMs;
    // Without the app's resolver: DNS_TIMEOUT_MS's default, a few lookups at once.
    this.safety = {
      allowPrivate: options.allowPrivate,
      resolver: options.resolver ?? new WebhookHostResolver({ timeoutMs: 3000, maxInFlight: 4 }),
    };
    this.agent = new Agent({
      connect: { lookup: safeLookup(this.safety) as never, timeout: this.timeoutMs },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connections: options.perEndpoint,
      keepAliveTimeout: 10_000,
    });
  }

  /** The outcome to record (its error a class, features/webhooks/delivery-errors.ts) and, for the log only, the detail. */
  async attempt(claim: ClaimedDelivery): Promise<AttemptOutcome & { detail?: string }> {
    try {
      const url = checkWebhookUrlSyntax(claim.url, this.safety);
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signWebhook(claim.secrets, claim.messageId, new Date(), claim.body),
      };
      const response = await request(url, {
        method: 'POST',
        body: claim.body,
        headers,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
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

  async close(): Promise<void> {
    await this.agent.close();
  }
}
