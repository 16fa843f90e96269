import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { quantile } from './stats.js';

/** What a closed-loop sender run measured (each sender posts its next batch when the last answered). */
export interface SendersRun {
  senders: number;
  batch: number;
  seconds: number;
  /** Events answered 202 in the timed window. */
  accepted: number;
  /** Events answered 202 by the warm-up round (not timed, but stored). */
  warm: number;
  refused: number;
  failed: number;
  perSecond: number;
  acceptP50: number;
  acceptP99: number;
}

/**
 * `senders` closed-loop senders post `batch`-event bodies to `POST /e` at `url` with the collector
 * host in `Host` (the tag script's request: text/plain JSON) for `seconds`, after one untimed
 * warm-up round; ids `<prefix>-<n>`. A 503 (log unavailable) makes that sender pause 50 ms.
 */
export async function runSenders(options: {
  url: string;
  host: string;
  tagId: string;
  prefix: string;
  senders: number;
  seconds: number;
  batch?: number;
}): Promise<SendersRun> {
  const { senders, seconds } = options;
  const batch = options.batch ?? 20;
  const agent = new http.Agent({ keepAlive: true, maxSockets: senders });
  const target = new URL(options.url);
  let sequence = 0;
  const body = () =>
    JSON.stringify({
      tagId: options.tagId,
      events: Array.from({ length: batch }, () => ({
        id: `${options.prefix}-${++sequence}`,
        event_name: sequence % 10 === 0 ? 'Purchase' : 'PageView',
        data: { path: '/product/123', value: 12.5, currency: 'EUR' },
      })),
    });
  const send = (payload: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          agent,
          method: 'POST',
          path: '/e',
          headers: { host: options.host, 'content-type': 'text/plain;charset=UTF-8' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const latencies: number[] = [];
  let accepted = 0;
  let refused = 0;
  let failed = 0;
  try {
    // Warm-up (JIT, pool, caches): counted, not timed.
    let warm = 0;
    await Promise.all(
      Array.from({ length: senders }, async () => {
        if ((await send(body())) === 202) warm += batch;
      }),
    );
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: senders }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          try {
            const status = await send(body());
            if (status === 202) {
              latencies.push(performance.now() - t0);
              accepted += batch;
            } else if (status === 503) {
              refused += 1;
              await sleep(50);
            } else failed += 1;
          } catch {
            failed += 1;
          }
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    return {
      senders,
      batch,
      seconds: elapsed,
      accepted,
      warm,
      refused,
      failed,
      perSecond: accepted / elapsed,
      acceptP50: quantile(latencies, 0.5),
      acceptP99: quantile(latencies, 0.99),
    };
  } finally {
    agent.destroy();
  }
}
