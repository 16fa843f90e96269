/**
 * What one process knows of each webhook endpoint's answers, and the in-flight limit it gives the
 * endpoint: WEBHOOK_ENDPOINT_CONCURRENCY once an attempt was answered (any status), one request at
 * a time before that (an endpoint not heard from yet) and after an attempt got no answer (a
 * timeout, a refused or reset connection) until one is answered again. A dead endpoint so holds
 * one slot of WEBHOOK_TIMEOUT_MS at a time and everyone else's deliveries keep the rest; a healthy
 * one reaches its full limit with its first answer. Remembered for the last `capacity` endpoints
 * heard from (one forgotten starts again at one request, as a new one does).
 */
export class EndpointAnswers {
  /** Endpoint id -> whether its last attempt was answered; insertion order is recency. */
  readonly #answered = new Map<string, boolean>();
  #silent = 0;

  constructor(
    private readonly perEndpoint: number,
    private readonly capacity = 10_000,
  ) {}

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

  /**
   * Records an attempt's outcome: `answered` when a status came back. Returns the change worth
   * logging: `silent` when an endpoint that had answered stopped, `answering` when a silent one answered.
   */
  note(endpointId: string, answered: boolean): 'silent' | 'answering' | null {
    const before = this.#answered.get(endpointId);
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
