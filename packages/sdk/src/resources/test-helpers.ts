import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';
import type { Tag } from './tags.js';

/** The states a test-mode tag can be driven to, each sending its real webhook. */
export type TriggerableTagEvent = 'tag.disconnected' | 'tag.reconnected' | 'tag.activated';

export interface TriggerTagParams {
  /**
   * `tag.disconnected`: a verified custom tag loses its record; `tag.reconnected`: the record is
   * back; `tag.activated`: the tag receives its first event.
   */
  event: TriggerableTagEvent;
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
}
