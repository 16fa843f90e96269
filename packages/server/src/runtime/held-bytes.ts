/** A reader counts as stalled once it has held bytes this long without giving any back. */
export const STALL_MS = 1000;

/** Why an account was ended: its own limit or the process's budget. */
export type HeldLimit = 'own' | 'process';

/** The bytes one slow reader makes this process hold, counted in the process's `HeldBytes`. */
export class HeldAccount {
  /** Bytes held now. */
  held = 0;
  /** True once `end` was called (the owner is ending; its bytes count until it gives them back). */
  ended = false;
  /** When this reader last made progress while holding bytes: its last `give`, or its first `take` from empty. */
  since = 0;
  private closed = false;

  constructor(
    private readonly owner: HeldBytes,
    /** This reader's own limit (Infinity: only the process budget). */
    readonly limit: number,
    private readonly end: (limit: HeldLimit) => void,
  ) {}

  /** Holds `bytes` more; over this account's limit, or the process's budget, ends readers (maybe this one). */
  take(bytes: number): void {
    if (this.closed) return;
    if (this.held === 0) this.since = performance.now();
    this.held += bytes;
    this.owner.add(bytes);
    if (this.held > this.limit) this.finish('own');
    this.owner.enforce();
  }

  give(bytes: number): void {
    if (this.closed) return;
    const n = Math.min(bytes, this.held);
    this.held -= n;
    if (n > 0) this.since = performance.now();
    this.owner.add(-n);
  }

  /** Gives back everything and leaves the process's accounts. */
  close(): void {
    if (this.closed) return;
    this.give(this.held);
    this.closed = true;
    this.owner.forget(this);
  }

  /** @internal */
  finish(limit: HeldLimit): void {
    if (this.ended || this.closed) return;
    this.ended = true;
    this.end(limit);
  }
}

/** The process-wide budget of bytes held for slow readers. */
export class HeldBytes {
  private total = 0;
  private readonly accounts = new Set<HeldAccount>();
  private recheck: NodeJS.Timeout | null = null;

  constructor(readonly budget: number) {}

  /** Bytes held for slow readers now, in this process. */
  get held(): number {
    return this.total;
  }

  /** An account for one reader; `end` is called at most once, when it must stop. */
  open(limit: number, end: (limit: HeldLimit) => void): HeldAccount {
    const account = new HeldAccount(this, limit, end);
    this.accounts.add(account);
    return account;
  }

  /** @internal */
  add(bytes: number): void {
    this.total += bytes;
  }

  /** @internal */
  forget(account: HeldAccount): void {
    this.accounts.delete(account);
  }

  /** @internal Over the budget: ends the stalest holders not already ending until the rest fits. */
  enforce(): void {
    if (this.total <= this.budget) return;
    let ending = 0;
    for (const account of this.accounts) if (account.ended) ending += account.held;
    while (this.total - ending > this.budget) {
      let stalest: HeldAccount | null = null;
      for (const account of this.accounts) {
        if (account.ended || account.held === 0) continue;
        if (
          !stalest ||
          account.since < stalest.since ||
          (account.since === stalest.since && account.held > stalest.held)
        )
          stalest = account;
      }
      if (!stalest) return;
      const stalledFor = performance.now() - stalest.since;
      if (stalledFor < STALL_MS) {
        this.recheck ??= setTimeout(() => {
          this.recheck = null;
          this.enforce();
        }, STALL_MS - stalledFor);
        this.recheck.unref();
        return;
      }
      stalest.finish('process');
      // What it still holds after its owner's ending (a stream gives its queue back at once).
      ending += stalest.held;
    }
  }
}
