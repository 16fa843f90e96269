import { CollectInput, CollectResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const ingestMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/collect',
    tags: ['Collection'],
    summary: 'Send tracking events',
    description:
      'Public collection endpoint (no partner token): stores 1..500 events for a live tag. Events ' +
      'are keyed by id per merchant, so a retried batch is stored once. The body is `application/json` ' +
      '(any other type is 415; the tag script in browsers sends its `text/plain` beacons to its collector ' +
      "host's `POST /e` instead). 202 means stored, " +
      'or, on a deployment with the durable event log, held by the log (replicated) and stored shortly; ' +
      '503 SERVICE_UNAVAILABLE with `Retry-After` when the events cannot be taken durably right now: retry ' +
      'the same events (same ids) after that many seconds. 429 RATE_LIMITED with `Retry-After` past a ' +
      "client address's budget (requests and body bytes per minute; IPv6 counted by /64) or the tag's " +
      'volume quotas (events and stored bytes per minute and per day); nothing of a refused batch is stored.',
    // Public: trpc-to-openapi marks operations as secured unless told otherwise.
    protect: false,
  },
  successStatus: 202,
  successDescription: 'Accepted: the events are stored, or durable in the event log (each id stored once).',
  errors: ['VALIDATION_ERROR', 'TAG_NOT_FOUND', 'TAG_NOT_LIVE', 'DATABASE_ERROR', 'SERVICE_UNAVAILABLE'],
};

export const ZIngestRequest = CollectInput;
export const ZIngestResponse = CollectResponse;
