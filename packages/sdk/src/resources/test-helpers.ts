import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';
import type { Tag } from './tags.js';
import type { WebhookStatsDigest, WebhookStatsSpike } from './webhooks.js';

/** The states a test-mode tag can be driven to, each sending its real webhook. */
export type TriggerableTagEvent = 'tag.disconnected' | 'tag.reconnected' | 'tag.activated';

export interface TriggerTagParams {
  /**
   * `tag.disconnected`: a verified custom tag loses its record; `tag.reconnected`: the record is
   * back; `tag.activated`: the tag receives its first event.
   */
  event: TriggerableTagEvent;
}

/** The statistics' webhooks test mode can send now. */
export type TriggerableStatsEvent = 'stats.digest' | 'stats.spike';

export interface TriggerStatsParams {
  /**
   * `stats.digest`: the merchant's last whole week (Monday to Sunday in its zone), now; `stats.spike`:
   * the last whole hour against the same hour of the four weeks before, sent whatever the ratio.
   */
  event: TriggerableStatsEvent;
}

/** What a stats trigger sent: the message, its deliveries and the webhook's `data`. */
export interface TriggerStatsResponse {
  type: TriggerableStatsEvent;
  messageId: string;
  deliveries: number;
  data: WebhookStatsDigest | WebhookStatsSpike;
}

/** `client.testHelpers`: test mode's helpers, for a client on an `mp_test_` key only. */
export class TestHelpers {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * `POST /v1/partners/test/tags/{tagId}/trigger`: drives a test-mode tag into the state `event`
   * names and sends its webhook to the test-mode endpoints; resolves to the tag after the change. A
   * live key throws PermissionDeniedError (403 `TEST_MODE_ONLY`); a tag that cannot take the event,
   * ConflictError (409 `TAG_STATE_CONFLICT`).
   */
  triggerTag(tagId: string, params: TriggerTagParams, options?: RequestOptions): APIPromise<Tag> {
    return this.#transport.post(
      `/v1/partners/test/tags/${encodeURIComponent(tagId)}/trigger`,
      { event: params.event },
      options,
    );
  }

  /**
   * `POST /v1/partners/test/merchants/{merchantId}/trigger`: sends a test-mode merchant's
   * `stats.digest` or `stats.spike` now, with its real figures, to the test-mode endpoints subscribed
   * (whatever the settings; it uses up no week or day). A live key throws PermissionDeniedError
   * (403 `TEST_MODE_ONLY`).
   */
  triggerStats(
    merchantId: string,
    params: TriggerStatsParams,
    options?: RequestOptions,
  ): APIPromise<TriggerStatsResponse> {
    return this.#transport.post(
      `/v1/partners/test/merchants/${encodeURIComponent(merchantId)}/trigger`,
      { event: params.event },
      options,
    );
  }
}
