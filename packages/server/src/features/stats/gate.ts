import { AppError } from '../../kernel/errors.js';

export interface GateOptions {
  /** Reads in flight per key or session; past it, 429. */
  perPrincipal: number;
  /** Reads in flight in this process; past it, reads wait in line. */
  total: number;
  /** Reads waiting in line at most; past it, 503. */
  waiting: number;
  /** How long a read waits in line before 503 (ms). */
  waitMs: number;
}

const DEFAULTS: GateOptions = { perPrincipal: 2, total: 4, waiting: 64, waitMs: 5_000 };

/**
 * Bounds the statistics' reads: a key or a session has at most `perPrincipal` in flight (the
 * rest answer 429 at once: a dashboard needs a few at a time, a loop hammering them is refused),
 * and the process runs at most `total`, the others waiting their turn in order, each for at most
 * `waitMs`. So one partner reading at its cap takes a bounded share of ClickHouse.
 */
export class ReadGate {
  private readonly options: GateOptions;
  private readonly perPrincipal = new Map<string, number>();
  private running = 0;
  private readonly line: Array<() => void> = [];

  constructor(options: Partial<GateOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  async run<T>(principal: string, read: () => Promise<T>): Promise<T> {
    const mine = this.perPrincipal.get(principal) ?? 0;
    if (mine >= this.options.perPrincipal) {
      throw new AppError(
        'RATE_LIMITED',
        `At most ${this.options.perPrincipal} statistics reads at a time per key or session: wait for one to finish.`,
        { headers: { 'retry-after': '1' } },
      );
    }
    this.perPrincipal.set(principal, mine + 1);
    try {
      await this.turn();
      try {
        return await read();
      } finally {
        this.running -= 1;
        this.line.shift()?.();
      }
    } finally {
      const left = (this.perPrincipal.get(principal) ?? 1) - 1;
      if (left === 0) this.perPrincipal.delete(principal);
      else this.perPrincipal.set(principal, left);
    }
  }

  private turn(): Promise<void> {
    if (this.running < this.options.total) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.line.length >= this.options.waiting) return Promise.reject(busy());
    return new Promise((resolve, reject) => {
      const go = () => {
        clearTimeout(timer);
        this.running += 1;
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.line.indexOf(go);
        if (at >= 0) this.line.splice(at, 1);
        reject(busy());
      }, this.options.waitMs);
      this.line.push(go);
    });
  }
}

const busy = () =>
  new AppError('STATS_UNAVAILABLE', 'The statistics are busy; retry shortly.', { headers: { 'retry-after': '1' } });
