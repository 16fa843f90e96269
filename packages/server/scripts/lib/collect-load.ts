/**
 * What the background-pass benches (purge, retention, replica lag) share: partner calls, a merchant
 * with a tag, and `/v1/collect` load on one tag with each request's latency kept under the phase it
 * started in, so a pass's p99 is read against the same load before it.
 */
import { quantile } from '../../src/testing/index.js';

interface Bench {
  url: string;
  partner: { apiKey: string; domain: string };
}

/** A partner API call: status and JSON body (null when none). */
export function partnerCall(server: Bench) {
  return (path: string, body: unknown, method = 'POST') =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.partner.apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (res) => ({
      status: res.status,
      body: (await res.json().catch(() => null)) as Record<string, string>,
    }));
}

/** A merchant named `name` with one tag on the partner's domain. */
export async function merchantWithTag(server: Bench, name: string): Promise<{ merchantId: string; tagId: string }> {
  const call = partnerCall(server);
  const merchant = await call('/v1/partners/merchant', { name });
  const tag = await call('/v1/partners/tag/generate', {
    merchantId: merchant.body!.merchantId,
    domain: server.partner.domain,
  });
  return { merchantId: merchant.body!.merchantId!, tagId: tag.body!.tagId! };
}

interface CollectLoad<P extends string> {
  /** Requests started from now on count under `phase`. */
  setPhase(phase: P): void;
  /** Ends the senders once their requests in flight are answered. */
  stop(): Promise<void>;
  /** Requests, p50, p99 and max (ms) of one phase. */
  summary(phase: P): { requests: number; p50: number; p99: number; max: number };
  /** Answers other than 202, all phases. */
  readonly errors: number;
}

/** `senders` loops of `perRequest`-event requests for `tagId`, latencies by phase (starting at `first`). */
export function startCollectLoad<P extends string>(
  server: Bench,
  tagId: string,
  options: { first: P; senders: number; perRequest: number },
): CollectLoad<P> {
  let phase: P | undefined = options.first;
  const latencies = new Map<P, number[]>();
  let errors = 0;
  let n = 0;
  const sender = async () => {
    while (phase !== undefined) {
      const events = Array.from({ length: options.perRequest }, () => ({ id: `l${n++}`, event_name: 'PageView' }));
      const at = phase;
      const started = performance.now();
      const res = await fetch(`${server.url}/v1/collect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tagId, events }),
      });
      await res.arrayBuffer();
      if (res.status !== 202) errors++;
      const list = latencies.get(at) ?? [];
      list.push(performance.now() - started);
      latencies.set(at, list);
    }
  };
  const senders = Array.from({ length: options.senders }, sender);
  return {
    setPhase: (next) => {
      phase = next;
    },
    stop: async () => {
      phase = undefined;
      await Promise.all(senders);
    },
    summary: (of) => {
      const values = latencies.get(of) ?? [];
      return {
        requests: values.length,
        p50: Number(quantile(values, 0.5).toFixed(1)),
        p99: Number(quantile(values, 0.99).toFixed(1)),
        max: Number(values.reduce((a, b) => Math.max(a, b), 0).toFixed(1)),
      };
    },
    get errors() {
      return errors;
    },
  };
}
