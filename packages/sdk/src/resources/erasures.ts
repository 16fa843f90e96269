import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';

/** `pending`: accepted, not started; `running`: events being deleted, statistics recounted; `completed`: done. */
export type ErasureStatus = 'pending' | 'running' | 'completed';

/** A visitor erasure, as `create` and `retrieve` return it (also the `data` of `erasure.completed`). */
export interface Erasure {
  id: string;
  /** The visitor (muid) erased. */
  muid: string;
  /** The merchant it covers; `null`: every merchant of the partner. */
  merchantId: string | null;
  /** Whether the visitor's events stay dropped after it completes. */
  suppress: boolean;
  status: ErasureStatus;
  /** Events deleted so far. */
  eventsDeleted: number;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** ISO 8601, UTC; `null` before it completes. */
  completedAt: string | null;
}

export interface ErasureCreateParams {
  /** The visitor id, as events carry it (1..128 characters). */
  muid: string;
  /** One of your merchants; omitted: the visitor's events of every merchant of yours. */
  merchantId?: string;
  /**
   * `true`: the visitor's events (same scope) are dropped from now on, forever (the collector still
   * answers as usual). Default: dropped only while the erasure runs.
   */
  suppress?: boolean;
}

/** `client.erasures`: `/v1/partners/erasures`, a visitor's right to erasure. */
export class Erasures {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * `POST /v1/partners/erasures` (202): erases a visitor's events in the background, recounts the
   * statistics, then sends `erasure.completed`. Retried safely (one `Idempotency-Key` per call).
   */
  create(params: ErasureCreateParams, options?: RequestOptions): APIPromise<Erasure> {
    return this.#transport.post('/v1/partners/erasures', { ...params }, options);
  }

  /** `GET /v1/partners/erasures/{erasureId}`: its status and the events deleted so far. */
  retrieve(erasureId: string, options?: RequestOptions): APIPromise<Erasure> {
    return this.#transport.get(
      `/v1/partners/erasures/${encodeURIComponent(erasureId)}`,
      new URLSearchParams(),
      options,
    );
  }
}
