import { AppError } from '../../kernel/errors.js';

export interface GateOptions {
  /** Reads of one key or session running or in the process's line at once. */
  perPrincipal: number;
  /** Reads of one key or session waiting behind those, in its own line; past it, 429. */
  perPrincipalWaiting: number;
  /** Reads running in this process; past it, reads wait in the process's line. */
  total: number;
  /** Reads in the process's line at most; past it, 503. */
  waiting: number;
  /** How long a read waits in either line before 503 (ms). */
  waitMs: number;
}

const DEFAULTS: GateOptions = { perPrincipal: 2, perPrincipalWaiting: 16, total: 4, waiting: 64, waitMs: 5_000 };

interface Principal {
  admitted: number;
  line: Array<() => void>;
}

/**
 * Bounds the statistics' reads. A key or a session has at most `perPrincipal` reads past its own
 * line (a dashboard's burst of a dozen waits there and is served two at a time; a loop beyond
 * `perPrincipalWaiting` more is refused with 429), and the process runs at most `total`, the
 * others waiting their turn in order. So one partner's reads take at most `perPrincipal` places
 * ahead of another's, and a bounded share of ClickHouse.
 */
export class ReadGate {
  private readonly options: GateOptions;
  private readonly principals = new Map<string, Principal>();
  private running = 0;
  private readonly line: Array<() => void> = [];

  constructor(options: Partial<GateOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  async run<T>(principal: string, read: () => Promise<T>): Promise<T> {
    await this.admit(principal);
    try {
      await this.turn();
      try {
        return await read();
      } finally {
        this.running -= 1;
        this.line.shift()?.();
      }
    } finally {
      this.release(principal);
    }
  }

  private admit(key: string): Promise<void> {
    const principal = this.principals.get(key) ?? { admitted: 0, line: [] };
    this.principals.set(key, principal);
    if (principal.admitted < this.options.perPrincipal) {
      principal.admitted += 1;
      return Promise.resolve();
    }
    if (principal.line.length >= this.options.perPrincipalWaiting) {
      const most = this.options.perPrincipal + this.options.perPrincipalWaiting;
      return Promise.reject(
        new AppError(
          'RATE_LIMITED',
          `At most ${most} statistics reads at a time per key or session: wait for one to finish.`,
          { headers: { 'retry-after': '1' } },
        ),
      );
    }
    // The slot is handed over by `release` (admitted stays as it is).
    return waitIn(principal.line, this.options.waitMs);
  }

  private release(key: string): void {
    const principal = this.principals.get(key);
    if (!principal) return;
    const next = principal.line.shift();
    if (next) {
      next();
      return;
    }
    principal.admitted -= 1;
    if (principal.admitted === 0) this.principals.delete(key);
  }

  private turn(): Promise<void> {
    if (this.running < this.options.total) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.line.length >= this.options.waiting) return Promise.reject(busy());
    return waitIn(this.line, this.options.waitMs, () => {
      this.running += 1;
    });
  }
}

/**
 * Waits in `line` until called from its head (`onTurn` runs then, synchronously, so that nobody
 * takes the place in between), or rejects 503 after `ms`, leaving the line.
 */
function waitIn(line: Array<() => void>, ms: number, onTurn?: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const go = () => {
      clearTimeout(timer);
      onTurn?.();
      resolve();
    };
    const timer = setTimeout(() => {
      const at = line.indexOf(go);
      if (at >= 0) line.splice(at, 1);
      reject(busy());
    }, ms);
    line.push(go);
  });
}

const busy = () =>
  new AppError('STATS_UNAVAILABLE', 'The statistics are busy; retry shortly.', { headers: { 'retry-after': '1' } });
