import type { DatabaseHandle } from '../db/client.js';
import { AppError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';

/** The channel the `events_notify` trigger (migration 0001) notifies on. */
/** Every statement that stores events notifies here (migration triggers): `merchant:seq,...`. */
const EVENTS_CHANNEL = 'partner_events';

/** What the hub fans notifications out to: one stream of a merchant's events, which reads its own rows. */
export interface HubSubscription {
  readonly merchantId: string;
  /** True once the start position is fixed: an event committed from then on is delivered. */
  readonly isStarted: boolean;
  /** New rows of the merchant up to `maxSeq` (unknown: maybe) were committed. */
  notify(maxSeq?: number): void;
  /** Fixes the start position (after `afterSeq`; undefined: from now on), once the hub listens. */
  start(afterSeq: number | undefined): Promise<void>;
  /** Ends it with a final error (its consumer's next read throws it). */
  fail(error: unknown): void;
  close(): void;
}

export interface StreamHubOptions<S extends HubSubscription> {
  listen: DatabaseHandle['listen'];
  /** Makes a merchant's subscription (compose.ts); `onEnd` is called once when it ends. */
  open: (merchantId: string, names: readonly string[], onEnd: (subscription: S) => void) => S;
  logger?: Logger;
}

export interface SubscribeOptions {
  merchantId: string;
  /** Event names to keep; empty: all. */
  names: readonly string[];
  /** Resume after this seq (the last id the client saw); undefined: only events from now on. */
  afterSeq?: number | undefined;
}

/** One LISTEN per process on `partner_events`. */
/** Seconds a stream ended by a shutdown tells its client to wait before reconnecting (another instance). */
const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

/** The final error of every stream open when its server shuts down. */
function streamShutdownError(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; reconnect with the last event id', {
    headers: { 'retry-after': String(SHUTDOWN_RETRY_AFTER_SECONDS) },
  });
}

export class StreamHub<S extends HubSubscription = HubSubscription> {
  private readonly listenFn: DatabaseHandle['listen'];
  private readonly open: StreamHubOptions<S>['open'];
  private readonly logger: Logger | undefined;
  private readonly byMerchant = new Map<string, Set<S>>();
  private listening: Promise<() => Promise<void>> | null = null;
  private closed = false;

  constructor(options: StreamHubOptions<S>) {
    this.listenFn = options.listen;
    this.open = options.open;
    this.logger = options.logger;
  }

  /** Open subscriptions whose start position is fixed (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const set of this.byMerchant.values()) for (const subscription of set) if (subscription.isStarted) n += 1;
    return n;
  }

  private ensureListening(): Promise<() => Promise<void>> {
    this.listening ??= this.listenFn(
      EVENTS_CHANNEL,
      (payload) => this.onPayload(payload),
      () => this.wakeAll(),
    ).catch((error: unknown) => {
      this.listening = null;
      throw error;
    });
    return this.listening;
  }

  private onPayload(payload: string): void {
    for (const entry of payload.split(',')) {
      const [merchantId, seq] = entry.split(':');
      if (!merchantId) continue;
      const subscribers = this.byMerchant.get(merchantId);
      if (!subscribers) continue;
      const maxSeq = seq ? Number(seq) : undefined;
      for (const subscription of subscribers) subscription.notify(Number.isFinite(maxSeq) ? maxSeq : undefined);
    }
  }

  private wakeAll(): void {
    for (const set of this.byMerchant.values()) for (const subscription of set) subscription.notify();
  }

  /** A subscription, ready: listening, and its start position fixed. */
  async subscribe(options: SubscribeOptions): Promise<S> {
    if (this.closed) throw streamShutdownError();
    const subscription = this.open(options.merchantId, options.names, (s) => this.remove(s));
    let set = this.byMerchant.get(options.merchantId);
    if (!set) {
      set = new Set();
      this.byMerchant.set(options.merchantId, set);
    }
    // Registered before listening and before the start position is read: nothing falls in between.
    set.add(subscription);
    try {
      await this.ensureListening();
      await subscription.start(options.afterSeq);
    } catch (error) {
      subscription.close();
      throw error;
    }
    if (this.closed) subscription.fail(streamShutdownError());
    return subscription;
  }

  private remove(subscription: S): void {
    const set = this.byMerchant.get(subscription.merchantId);
    if (!set) return;
    set.delete(subscription);
    if (set.size === 0) this.byMerchant.delete(subscription.merchantId);
  }

  /** True once `close()` began (shutdown): no new subscription, open ones end with SHUTDOWN_RETRY_AFTER_SECONDS. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Ends every subscription and stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of [...this.byMerchant.values()])
      for (const subscription of [...set]) subscription.fail(streamShutdownError());
    const listening = this.listening;
    this.listening = null;
    if (!listening) return;
    try {
      const unlisten = await listening;
      await unlisten();
    } catch (error) {
      this.logger?.warn({ err: error }, 'event stream: unlisten failed');
    }
  }
}
