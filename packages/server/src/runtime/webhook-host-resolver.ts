import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import { WebhookLookupBusyError } from '../kernel/lookup-errors.js';

export interface WebhookHostResolverOptions {
  /** `ip[:port]` entries (DNS_SERVERS); empty or undefined: the system's resolvers. */
  servers?: string[] | undefined;
  /** Budget of one lookup, waiting for a slot included (DNS_TIMEOUT_MS). */
  timeoutMs: number;
  /** Lookups in flight at once (WEBHOOK_DNS_CONCURRENCY); as many more may wait for a slot. */
  maxInFlight: number;
}

/** Resolves webhook host names. */
export class WebhookHostResolver {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: WebhookHostResolverOptions) {}

  /** Lookups running now (for tests and metrics). */
  get inFlight(): number {
    return this.active;
  }

  /** Every A and AAAA address of `host` (no trailing dot needed); rejects with the DNS error code. */
  async resolve(host: string): Promise<LookupAddress[]> {
    const name = host.replace(/\.+$/, '');
    const family = net.isIP(name);
    if (family !== 0) return [{ address: name, family }];
    const deadline = Date.now() + this.options.timeoutMs;
    await this.acquire(deadline);
    try {
      return await this.query(name, Math.max(1, deadline - Date.now()));
    } finally {
      this.release();
    }
  }

  private acquire(deadline: number): Promise<void> {
    if (this.active < this.options.maxInFlight) {
      this.active++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.maxInFlight) {
      return Promise.reject(new WebhookLookupBusyError('too many webhook host lookups in flight'));
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(go);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(new WebhookLookupBusyError('no webhook host lookup slot within the DNS budget'));
      }, deadline - Date.now());
      this.waiting.push(go);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter (active unchanged).
    if (next) next();
    else this.active--;
  }

  private async query(name: string, budgetMs: number): Promise<LookupAddress[]> {
    // c-ares doubles the per-try timeout on a retry: a third, then two thirds, fit the budget.
    const resolver = new Resolver({ timeout: Math.max(50, Math.floor(budgetMs / 3)), tries: 2 });
    if (this.options.servers?.length) resolver.setServers(this.options.servers);
    // The hard bound: whatever c-ares still waits for is cancelled (ECANCELLED), nothing lingers.
    const timer = setTimeout(() => resolver.cancel(), budgetMs);
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
      const addresses: LookupAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length > 0) return addresses;
      // A failure other than "no such name / no record" (timeout, SERVFAIL, cancelled) is what went wrong.
      const failure = [v4, v6].find(
        (r): r is PromiseRejectedResult =>
          r.status === 'rejected' && !['ENODATA', 'ENOTFOUND'].includes((r.reason as { code?: string })?.code ?? ''),
      );
      if (failure) throw failure.reason;
      throw Object.assign(new Error(`${name} has no address`), { code: 'ENOTFOUND' });
    } finally {
      clearTimeout(timer);
    }
  }
}
