/**
 * webhooks (issue 14's closing figures), on the bench database, with a second API process that
 * runs the delivery worker and the tag monitor (`WEBHOOK_DELIVERY=on`, `TAG_MONITOR=on`; the
 * other bench API processes run with both off) and real receivers on loopback:
 * 1. deliveries/s: messages fanned out to 8 endpoints of one live receiver, from the first commit
 *    of the transactional outbox until the receiver got every delivery;
 * 2. the same beside a dead endpoint (accepts the connection, never answers) holding pending
 *    deliveries, the production timeout (10 s) and concurrency: its rate as a ratio of (1). Alone
 *    and beside alternate for ROUNDS rounds (a new dead endpoint each, deleted after it) and the
 *    median round's ratio is reported: one pair on a shared machine swung from 0.54x to 0.97x;
 * 3. record -> verified: custom tags generated under the test schedule (`TAG_RECHECK_SCHEDULE=1s,2s,4s`),
 *    their CNAME published on a loopback DNS server at staggered moments, no verify call: time
 *    until `tag.verified` reaches the receiver (and until the tag's `verifiedAt`);
 * 4. the claim's cost (first, before any worker runs): the server's `claimDueDeliveries` beside
 *    800 due rows of 8 live endpoints, with 0, 10,000 and 100,000 due rows of a dead endpoint, p50
 *    as a ratio of the claim with none.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  claimDueDeliveries,
  enqueueWebhookEvent,
  openDatabase,
  releaseClaims,
  startWebhookReceiver,
  type TestWebhookReceiver,
} from '@partner/server/bench';
import { startTestDnsServer } from '@partner/server/testing/dns-server';
import { startChild } from '../lib/children.js';
import { apiServer, type BenchContext } from '../lib/context.js';
import { request, requestJson } from '../lib/http.js';
import { log } from '../lib/log.js';
import { int, ms, quantile, ratio } from '../lib/stats.js';
import { mark, type Section } from './types.js';

const RECHECK_SCHEDULE = '1s,2s,4s';
const ENDPOINTS = 8;
/** Alone / beside-a-dead-endpoint pairs; the median pair is reported. */
const ROUNDS = 3;
/** Dead-endpoint cost target: the live endpoints keep at least this share of their rate. */
const DEAD_RATIO_TARGET = 0.8;
/** record -> verified target in the test schedule: the longest interval (4 s) plus a second of slack. */
const VERIFIED_TARGET_MS = 5_000;
/** Due rows of the dead endpoint beside the live ones, in the order measured (the first: none). */
const CLAIM_BACKLOGS = [0, 10_000, 100_000];
/** Rounds of the claim measurement, each building the backlog up from none. */
const CLAIM_ROUNDS = 3;
const CLAIM_LIVE_ENDPOINTS = 8;
const CLAIM_LIVE_ROWS = 800;
/** A worker's claim: 8 free slots, the default WEBHOOK_ENDPOINT_CONCURRENCY, its lease at the 10 s timeout. */
const CLAIM = { limit: 8, perEndpoint: 4, leaseMs: 35_000, skipEndpoints: [] as string[] };
/** The claim with the largest backlog against none: the cost must not follow the dead endpoint's due rows. */
const CLAIM_RATIO_TARGET = 1.5;

interface DeliveryRun {
  deliveries: number;
  seconds: number;
  perSecond: number;
}

interface ClaimCost {
  liveDue: number;
  liveEndpoints: number;
  limit: number;
  perEndpoint: number;
  /** One per backlog (every round's claims); `vsNone` is its p50 / the p50 with no backlog. */
  runs: Array<{ deadDue: number; claims: number; p50Ms: number; p95Ms: number; vsNone: number }>;
  /** The largest backlog's p50 / no backlog's. */
  ratio: number;
  /** The same ratio in each round, in the order run. */
  roundRatios: number[];
}

export interface WebhooksResult {
  /** The claim's cost beside a dead endpoint's due rows (measured first, no worker running). */
  claim: ClaimCost;
  endpoints: number;
  alone: DeliveryRun;
  besideDead: DeliveryRun & { deadPending: number; deadRequestsSeen: number; timeoutMs: number };
  /** besideDead.perSecond / alone.perSecond, of the median round (`alone` and `besideDead` are that round's). */
  deadRatio: number;
  /** Every round's ratio, in the order run. */
  roundRatios: number[];
  recordToVerified: {
    schedule: string;
    /** ms from publishing the record until the receiver got `tag.verified`. */
    webhookMs: number[];
    /** ms from publishing the record until the tag's `verifiedAt`. */
    verifiedAtMs: number[];
  };
}

interface Payload {
  type: string;
  data: { tagId: string };
}

export const webhooksSection: Section<WebhooksResult> = {
  title: 'Webhooks',
  async run(ctx: BenchContext) {
    const quick = ctx.settings.quick;
    const claim = await claimCostRun(ctx);
    const dns = await startTestDnsServer();
    const live = await startWebhookReceiver();
    const timeoutMs = 10_000;
    const base = await apiServer(ctx.settings, ctx.url, 'API server (webhooks)');
    const api = await startChild({
      ...base,
      env: {
        ...base.env,
        WEBHOOK_DELIVERY: 'on',
        TAG_MONITOR: 'on',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_TIMEOUT_MS: String(timeoutMs),
        WEBHOOK_RETRY_SCHEDULE: '1h',
        TAG_RECHECK_SCHEDULE: RECHECK_SCHEDULE,
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: '2000',
      },
    });
    const handle = await openDatabase({ kind: 'postgres', url: ctx.url, maxConnections: 2 });
    const partnerId = ctx.partner.partnerId;
    const endpoint = (url: string, events: string[]) =>
      requestJson<{ webhookId: string }>(`${api.url}/v1/partners/webhooks`, {
        method: 'POST',
        headers: ctx.auth,
        body: { url, events },
        expect: 201,
      });
    try {
      // A real tag as GET /v1/partners/tag/{tagId} returns it: the data of every message.
      const tag = await requestJson<Record<string, unknown>>(`${api.url}/v1/partners/tag/${ctx.spareMerchant.tagId}`, {
        headers: ctx.auth,
      });
      for (let i = 0; i < ENDPOINTS; i++) await endpoint(`${live.url}?e=${i}`, ['tag.activated', 'tag.reconnected']);
      const deliveries = quick ? 800 : 4000;
      const deliver = async (type: 'tag.activated' | 'tag.reconnected'): Promise<DeliveryRun> => {
        live.received.length = 0;
        const messages = deliveries / ENDPOINTS;
        const started = performance.now();
        // Queued in transactions of 50 messages; each fans out to the 8 endpoints.
        for (let i = 0; i < messages; i += 50) {
          await handle.db.transaction(async (tx) => {
            for (let j = i; j < Math.min(i + 50, messages); j++) {
              await enqueueWebhookEvent(tx, { partnerId, type, data: tag });
            }
          });
        }
        await live.waitFor(deliveries, 600_000);
        const seconds = (performance.now() - started) / 1000;
        return { deliveries, seconds, perSecond: deliveries / seconds };
      };
      await deliver('tag.activated'); // warm-up (connections, JIT)
      const deadPending = quick ? 100 : 400;
      const rounds: { alone: DeliveryRun; beside: DeliveryRun; ratio: number; deadSeen: number }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const alone = await deliver('tag.activated');
        const dead = await startWebhookReceiver();
        dead.fallback = 'hang';
        try {
          const { webhookId: deadId } = await endpoint(dead.url, ['webhook.test']);
          for (let i = 0; i < deadPending; i++) {
            await enqueueWebhookEvent(handle.db, {
              partnerId,
              type: 'webhook.test',
              data: { webhookId: deadId, message: 'x' },
              endpointId: deadId,
            });
          }
          await dead.waitFor(1, 30_000); // its requests hold their slots now
          const beside = await deliver('tag.reconnected');
          const pair = beside.perSecond / alone.perSecond;
          rounds.push({ alone, beside, ratio: pair, deadSeen: dead.received.length });
          log(
            `  webhooks: round ${round + 1}: ${int(alone.perSecond)} deliveries/s to ${ENDPOINTS} live endpoints alone, ${int(beside.perSecond)}/s beside a dead endpoint (${ratio(pair)})`,
          );
          // Gone before the next round: deleting the endpoint fails its pending deliveries, closing
          // the receiver ends the request it holds.
          const gone = await request(`${api.url}/v1/partners/webhooks/${deadId}`, {
            method: 'DELETE',
            headers: ctx.auth,
          });
          if (gone.status !== 204) throw new Error(`DELETE webhook: ${gone.status} ${gone.body}`);
        } finally {
          await dead.close();
        }
      }
      const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)] as (typeof rounds)[0];
      const { alone, beside } = median;

      const recordToVerified = await recordToVerifiedRun(ctx, api.url, dns, live, endpoint, quick ? 4 : 10);
      return {
        claim,
        endpoints: ENDPOINTS,
        alone,
        besideDead: { ...beside, deadPending, deadRequestsSeen: median.deadSeen, timeoutMs },
        deadRatio: median.ratio,
        roundRatios: rounds.map((r) => r.ratio),
        recordToVerified,
      };
    } finally {
      await api.stop();
      await handle.close();
      await live.close();
      await dns.close();
    }
  },
  targets(r) {
    const verifiedMax = Math.max(...r.recordToVerified.webhookMs);
    return [
      {
        what: `webhooks: deliveries/s to a local receiver (${r.endpoints} endpoints)`,
        target: 'figure',
        value: int(r.alone.perSecond),
        met: null,
      },
      {
        what: `webhooks: record -> tag.verified received, max (schedule ${r.recordToVerified.schedule})`,
        target: `< ${VERIFIED_TARGET_MS / 1000} s`,
        value: `${(verifiedMax / 1000).toFixed(2)} s`,
        met: verifiedMax < VERIFIED_TARGET_MS,
      },
      {
        what: 'webhooks: live deliveries/s beside a dead endpoint / alone',
        target: `>= ${DEAD_RATIO_TARGET}x`,
        value: ratio(r.deadRatio),
        met: r.deadRatio >= DEAD_RATIO_TARGET,
      },
      {
        what: `webhooks: claim with ${int(r.claim.runs.at(-1)?.deadDue ?? 0)} dead due rows / without (p50)`,
        target: `<= ${CLAIM_RATIO_TARGET}x`,
        value: ratio(r.claim.ratio),
        met: r.claim.ratio <= CLAIM_RATIO_TARGET,
      },
    ];
  },
  report(r) {
    const v = r.recordToVerified;
    const s = (values: number[], q: number) => `${(quantile(values, q) / 1000).toFixed(2)} s`;
    return [
      '## Webhooks',
      '',
      `A second API process runs the delivery worker and the tag monitor; real receivers on loopback. Deliveries counted from the first outbox commit until the receiver got the last one (${r.endpoints} endpoints, each message fanned out to all).`,
      '',
      '| run | deliveries | seconds | deliveries/s |',
      '|---|---|---|---|',
      `| live endpoints alone | ${int(r.alone.deliveries)} | ${r.alone.seconds.toFixed(2)} | ${int(r.alone.perSecond)} |`,
      `| beside a dead endpoint (${r.besideDead.deadPending} pending, ${r.besideDead.timeoutMs / 1000} s timeout, ${r.besideDead.deadRequestsSeen} of its requests hanging) | ${int(r.besideDead.deliveries)} | ${r.besideDead.seconds.toFixed(2)} | ${int(r.besideDead.perSecond)} (${ratio(r.deadRatio)}) |`,
      '',
      `The median of ${r.roundRatios.length} alone / beside rounds (a new dead endpoint each); every round's ratio: ${r.roundRatios.map((x) => ratio(x)).join(', ')}.`,
      '',
      `The claim (\`claimDueDeliveries\`, limit ${r.claim.limit}, ${r.claim.perEndpoint} per endpoint) beside ${int(r.claim.liveDue)} due rows of ${r.claim.liveEndpoints} live endpoints, with the due rows of a dead endpoint (older than the live ones); ${r.claim.roundRatios.length} rounds building the backlog up from none, each claim's rows given back before the next, no worker running. Largest / none in each round: ${r.claim.roundRatios.map((x) => ratio(x)).join(', ')}.`,
      '',
      '| due rows of the dead endpoint | claims | p50 | p95 | p50 / none |',
      '|---|---|---|---|---|',
      ...r.claim.runs.map(
        (run) => `| ${int(run.deadDue)} | ${run.claims} | ${ms(run.p50Ms)} | ${ms(run.p95Ms)} | ${ratio(run.vsNone)} |`,
      ),
      '',
      `Record -> verified, schedule \`${v.schedule}\`, ${v.webhookMs.length} custom tags, records published at staggered moments after generate, no verify call: \`tag.verified\` received p50 ${s(v.webhookMs, 0.5)}, max ${s(v.webhookMs, 1)}; \`verifiedAt\` p50 ${s(v.verifiedAtMs, 0.5)}, max ${s(v.verifiedAtMs, 1)}. ${mark(Math.max(...v.webhookMs) < VERIFIED_TARGET_MS)} within ${VERIFIED_TARGET_MS / 1000} s.`,
      '',
    ];
  },
};

/**
 * The claim's cost beside a dead endpoint's due rows: 8 live endpoints with 800 due rows and a dead
 * endpoint with 0, then 10,000, then 100,000 due rows (older than the live ones, as a backlog
 * ages). CLAIM_ROUNDS rounds, each building the backlog up from none (the drift of a shared machine
 * falls on every size alike); at each size the server's claim is timed `reps` times after a
 * warm-up, each claim's rows given back (untimed) before the next. A size's p50 is over all its
 * rounds. Runs before the section's worker starts (the bench's other API processes deliver
 * nothing); its endpoints and deliveries are deleted at the end.
 */
async function claimCostRun(ctx: BenchContext): Promise<ClaimCost> {
  const sql = ctx.raw;
  const partnerId = ctx.partner.partnerId;
  const largest = Math.max(...CLAIM_BACKLOGS);
  const handle = await openDatabase({ kind: 'postgres', url: ctx.url, maxConnections: 1 });
  try {
    await sql`insert into webhook_endpoints (partner_id, url, secret, description)
      select ${partnerId}::uuid, 'http://127.0.0.1:9/bench-claim?e=' || i, 'whsec_bench',
        case when i = 0 then 'bench claim: dead' else 'bench claim: live' end
      from generate_series(0, ${CLAIM_LIVE_ENDPOINTS}::int) i`;
    await sql`with m as (
        insert into webhook_messages (partner_id, type, data)
        select ${partnerId}::uuid, 'webhook.test', '{"bench":"claim"}'::jsonb
        from generate_series(1, ${CLAIM_LIVE_ROWS / CLAIM_LIVE_ENDPOINTS}::int)
        returning id
      )
      insert into webhook_deliveries (message_id, endpoint_id, next_attempt_at)
      select m.id, e.id, now() - random() * interval '60 seconds'
      from m, webhook_endpoints e where e.description = 'bench claim: live'`;
    // The dead endpoint's messages, written once; its deliveries are made again each round.
    await sql`insert into webhook_messages (partner_id, type, data)
      select ${partnerId}::uuid, 'webhook.test', jsonb_build_object('bench', 'claim-dead', 'i', i)
      from generate_series(1, ${largest}::int) i`;
    const reps = ctx.settings.reps;
    const warmUp = Math.min(20, reps);
    const samples = new Map<number, number[]>(CLAIM_BACKLOGS.map((backlog) => [backlog, []]));
    const roundRatios: number[] = [];
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      await sql`delete from webhook_deliveries
        where endpoint_id = (select id from webhook_endpoints where description = 'bench claim: dead')`;
      let deadDue = 0;
      const p50s: number[] = [];
      for (const backlog of CLAIM_BACKLOGS) {
        await sql`insert into webhook_deliveries (message_id, endpoint_id, next_attempt_at, attempts)
          select m.id, e.id, now() - interval '1 minute' - random() * interval '1 day', 3
          from webhook_messages m, webhook_endpoints e
          where m.data @> '{"bench":"claim-dead"}' and (m.data->>'i')::int > ${deadDue}::int
            and (m.data->>'i')::int <= ${backlog}::int and e.description = 'bench claim: dead'`;
        deadDue = backlog;
        await sql`vacuum (analyze) webhook_deliveries`;
        const timed: number[] = [];
        for (let i = 0; i < warmUp + reps; i++) {
          const started = performance.now();
          const claims = await claimDueDeliveries(handle.db, CLAIM);
          const took = performance.now() - started;
          if (claims.length !== CLAIM.limit) throw new Error(`claim: ${claims.length} rows, expected ${CLAIM.limit}`);
          await releaseClaims(handle.db, claims);
          if (i >= warmUp) timed.push(took);
        }
        samples.get(backlog)?.push(...timed);
        p50s.push(quantile(timed, 0.5));
      }
      roundRatios.push((p50s.at(-1) as number) / (p50s[0] as number));
      log(
        `  webhooks: claim round ${round + 1}: p50 ${p50s.map((x, i) => `${ms(x)} with ${int(CLAIM_BACKLOGS[i] as number)}`).join(', ')} dead due rows (${ratio(roundRatios.at(-1) as number)})`,
      );
    }
    const p50 = (backlog: number) => quantile(samples.get(backlog) ?? [], 0.5);
    const none = p50(0);
    const runs = CLAIM_BACKLOGS.map((deadDue) => {
      const all = samples.get(deadDue) ?? [];
      return {
        deadDue,
        claims: all.length,
        p50Ms: p50(deadDue),
        p95Ms: quantile(all, 0.95),
        vsNone: p50(deadDue) / none,
      };
    });
    return {
      liveDue: CLAIM_LIVE_ROWS,
      liveEndpoints: CLAIM_LIVE_ENDPOINTS,
      limit: CLAIM.limit,
      perEndpoint: CLAIM.perEndpoint,
      runs,
      ratio: p50(largest) / none,
      roundRatios,
    };
  } finally {
    // The endpoints go with their deliveries: nothing left for the worker. Their messages stay
    // (orphans, read by nothing): deleting a message scans webhook_deliveries for its deliveries
    // (no index leads with message_id), 100,000 scans here.
    await sql`delete from webhook_endpoints where description like 'bench claim:%'`;
    await handle.close();
  }
}

async function recordToVerifiedRun(
  ctx: BenchContext,
  apiUrl: string,
  dns: Awaited<ReturnType<typeof startTestDnsServer>>,
  receiver: TestWebhookReceiver,
  endpoint: (url: string, events: string[]) => Promise<{ webhookId: string }>,
  samples: number,
): Promise<WebhooksResult['recordToVerified']> {
  await endpoint(`${receiver.url}?verified`, ['tag.verified']);
  receiver.received.length = 0;
  // Each request parsed once (the receiver runs in this process: its event loop is the bench's).
  const verifiedAt = new Map<string, number>();
  let parsed = 0;
  const seen = (tagId: string) => {
    for (; parsed < receiver.received.length; parsed++) {
      const request = receiver.received[parsed];
      const payload = JSON.parse(request?.body ?? '{}') as Payload;
      if (request && payload.type === 'tag.verified') verifiedAt.set(payload.data.tagId, request.receivedAt);
    }
    const at = verifiedAt.get(tagId);
    return at === undefined ? undefined : { receivedAt: at };
  };
  const results = await Promise.all(
    Array.from({ length: samples }, async (_, i) => {
      // A merchant of its own: generate answers a merchant's existing tag.
      const { merchantId } = await requestJson<{ merchantId: string }>(`${apiUrl}/v1/partners/merchant`, {
        method: 'POST',
        headers: ctx.auth,
        body: { name: `Bench webhooks ${i}` },
        expect: 201,
      });
      const domain = `bench-hook-${randomUUID().slice(0, 8)}.com`;
      const tag = await requestJson<{ tagId: string; record: { name: string; value: string } }>(
        `${apiUrl}/v1/partners/tag/generate`,
        { method: 'POST', headers: ctx.auth, body: { merchantId, domain } },
      );
      // Published at different points of the schedule (0 .. 7 s after generate).
      await sleep(Math.round((i * 7000) / samples));
      const published = Date.now();
      dns.setCname(`${tag.record.name}.${domain}`, tag.record.value);
      const deadline = published + 30_000;
      let got = seen(tag.tagId);
      while (!got) {
        if (Date.now() > deadline) {
          const view = await requestJson(`${apiUrl}/v1/partners/tag/${tag.tagId}`, { headers: ctx.auth });
          throw new Error(`no tag.verified for ${tag.tagId} within 30 s; the tag: ${JSON.stringify(view)}`);
        }
        await sleep(20);
        got = seen(tag.tagId);
      }
      const view = await requestJson<{ verifiedAt: string }>(`${apiUrl}/v1/partners/tag/${tag.tagId}`, {
        headers: ctx.auth,
      });
      return { webhook: got.receivedAt - published, verifiedAt: Date.parse(view.verifiedAt) - published };
    }),
  );
  return {
    schedule: RECHECK_SCHEDULE,
    webhookMs: results.map((r) => r.webhook),
    verifiedAtMs: results.map((r) => r.verifiedAt),
  };
}
