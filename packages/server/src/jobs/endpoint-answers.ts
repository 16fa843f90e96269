/** What one process knows of each webhook endpoint's answers, and the in-flight limit it gives the endpoint. */
export class EndpointAnswers {
  /** Endpoint id -> whether its last attempt was answered; insertion order is recency. */
  readonly #answered = new Map<string, boolean>();
  /** Endpoint id -> slow silent attempts in a row, and until when it is not claimed. */
  readonly #backoff = new Map<string, { streak: number; until: number }>();
  #silent = 0;

  constructor(
    private readonly perEndpoint: number,
    private readonly capacity = 10_000,
    private readonly backoffBaseMs = 10_000,
    private readonly maxBackoffMs = 600_000,
  ) {}

  /** Records an attempt that got no answer before its deadline. Returns the delay. */
  noteTimedOut(endpointId: string, now = Date.now()): number {
    const streak = (this.#backoff.get(endpointId)?.streak ?? 0) + 1;
    const delay = Math.min(this.backoffBaseMs * 2 ** Math.min(streak - 1, 30), this.maxBackoffMs);
    this.#backoff.delete(endpointId);
    this.#backoff.set(endpointId, { streak, until: now + delay });
    if (this.#backoff.size > this.capacity) this.#backoff.delete(this.#backoff.keys().next().value as string);
    return delay;
  }

  /** Endpoints backing off now (what a claim skips). */
  coolingIds(now = Date.now()): string[] {
    const ids: string[] = [];
    for (const [id, state] of this.#backoff) if (state.until > now) ids.push(id);
    return ids;
  }

  /** Requests the endpoint may have in flight in this process now. */
  limitOf(endpointId: string): number {
    return this.#answered.get(endpointId) === true ? this.perEndpoint : 1;
  }

  /** Endpoints whose last attempt got no answer (sent one request at a time). */
  get silentCount(): number {
    return this.#silent;
  }

  /** The silent endpoints' ids (what a claim takes one row of). */
  silentIds(): string[] {
    const ids: string[] = [];
    for (const [id, answered] of this.#answered) if (!answered) ids.push(id);
    return ids;
  }

  /** Records an attempt's outcome: `answered` when a status came back. */
  note(endpointId: string, answered: boolean): 'silent' | 'answering' | null {
    const before = this.#answered.get(endpointId);
    if (answered) this.#backoff.delete(endpointId);
    this.#answered.delete(endpointId);
    this.#answered.set(endpointId, answered);
    if (before === false) this.#silent--;
    if (!answered) this.#silent++;
    if (this.#answered.size > this.capacity) {
      const [oldest, wasAnswered] = this.#answered.entries().next().value as [string, boolean];
      this.#answered.delete(oldest);
      if (!wasAnswered) this.#silent--;
    }
    if (before === true && !answered) return 'silent';
    if (before === false && answered) return 'answering';
    return null;
  }
}
