import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';

/** A conversion the statistics count: events of one name, or page views of a path pattern. */
export interface Goal {
  goalId: string;
  merchantId: string;
  name: string;
  /** Events of this name convert; null for a path goal. */
  eventName: string | null;
  /** Page views of matching paths convert (`*` within a segment, `**` across); null for an event goal. */
  pathPattern: string | null;
  /** ISO 8601, UTC. */
  createdAt: string;
}

/** Exactly one of `eventName` and `pathPattern`. */
export type GoalCreateParams =
  | { merchantId: string; name: string; eventName: string; pathPattern?: undefined }
  | { merchantId: string; name: string; pathPattern: string; eventName?: undefined };

const goalsPath = (merchantId: string) => `/v1/partners/merchant/${encodeURIComponent(merchantId)}/goals`;

/** `client.merchants.goals`: a merchant's goals (at most 100). */
export class Goals {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `POST /v1/partners/merchant/{merchantId}/goals` (201); past 100 goals, `ConflictError` (LIMIT_EXCEEDED). */
  create(params: GoalCreateParams, options?: RequestOptions): APIPromise<Goal> {
    const { merchantId, ...body } = params;
    return this.#transport.post(goalsPath(merchantId), body, options);
  }

  /** `GET /v1/partners/merchant/{merchantId}/goals`: oldest first. */
  list(merchantId: string, options?: RequestOptions): APIPromise<{ goals: Goal[] }> {
    return this.#transport.get(goalsPath(merchantId), new URLSearchParams(), options);
  }

  /** `DELETE /v1/partners/merchant/{merchantId}/goals/{goalId}` (204). */
  delete(merchantId: string, goalId: string, options?: RequestOptions): APIPromise<void> {
    return this.#transport
      .delete(`${goalsPath(merchantId)}/${encodeURIComponent(goalId)}`, options)
      ._thenUnwrap(() => undefined);
  }
}
