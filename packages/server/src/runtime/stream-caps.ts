import { AppError } from '../kernel/errors.js';

/** Seconds a client over a stream cap is told to wait. */
const STREAM_CAP_RETRY_AFTER_SECONDS = 5;

/** What a cap counts, in its 429's message. */
export interface CapNames {
  /** `open event streams` */
  many: string;
  /** `stream` */
  one: string;
}

const STREAMS: CapNames = { many: 'open event streams', one: 'stream' };

/** Caps on concurrent event streams: per partner and per process. */
export class StreamCaps {
  private readonly byPartner = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly perPartner: number,
    private readonly perProcess: number,
    private readonly names: CapNames = STREAMS,
  ) {}

  /** The 429 a new stream of the partner would get now, or null when a slot is free. */
  refusal(partnerId: string): AppError | null {
    const mine = this.byPartner.get(partnerId) ?? 0;
    if (mine < this.perPartner && this.total < this.perProcess) return null;
    const { many, one } = this.names;
    const which = mine >= this.perPartner ? `${this.perPartner} per partner` : `this server’s ${one} limit`;
    return new AppError('RATE_LIMITED', `Too many ${many} (${which}); close one or retry later`, {
      headers: { 'retry-after': String(STREAM_CAP_RETRY_AFTER_SECONDS) },
    });
  }

  /** Takes a slot for the partner, or throws 429; the returned function gives it back (once). */
  take(partnerId: string): () => void {
    const refused = this.refusal(partnerId);
    if (refused) throw refused;
    const mine = this.byPartner.get(partnerId) ?? 0;
    this.byPartner.set(partnerId, mine + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byPartner.get(partnerId) ?? 1) - 1;
      if (left <= 0) this.byPartner.delete(partnerId);
      else this.byPartner.set(partnerId, left);
    };
  }
}
