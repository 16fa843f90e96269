// Log mode on a JetStream cluster of three `nats-server` processes of our own (loopback, free ports,
// stores under a temporary directory: src/testing/nats-cluster.mjs; never the machine's 4222), the
// stream at 3 replicas, two API processes (ROLE=api) and two writer processes (ROLE=writer) on one
// scratch PostgreSQL database, under steady collector load (POST /v1/collect, distinct event ids;
// a batch answered 503 is re-sent with the same ids, as the tag does):
// 1. the stream's leader node is killed with SIGKILL (an election);
// 2. a writer is killed with SIGKILL under load (its delivered, unacknowledged batch is redelivered);
// 3. both are started again; the load stops; the log drains.
// Every event answered 202 is stored exactly once; collectors answer only 202, or 503 with
// Retry-After, each within a deadline, and recover by themselves. The figures are printed.
import { randomUUID } from 'node:crypto';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { logNames } from '../../src/runtime/event-log.js';
import { TEST_TARGET_HOST } from '../../src/testing/index.js';
import { type NatsCluster, natsServerAvailable, startNatsCluster } from '../../src/testing/nats-cluster.mjs';
import { uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  type ServerProcess,
  spawnServer,
} from '../helpers/hardening.js';

const natsServer = natsServerAvailable();
const pgUp = await postgresAnswers();
if (!natsServer) console.warn('event-log cluster test skipped: nats-server is not on PATH');
if (!pgUp) console.warn('event-log cluster test skipped: PostgreSQL does not answer at 127.0.0.1:5432');
const available = natsServer && pgUp;

/** Measured figures, printed at the end. */
const figures: Record<string, unknown> = {};
afterAll(() => {
  if (Object.keys(figures).length > 0) console.log(`event-log cluster figures: ${JSON.stringify(figures)}`);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** No collector answer may take longer than this (a publish hanging through the election fails it). */
const ANSWER_DEADLINE_MS = 10_000;

interface Answer {
  sender: number;
  api: number;
  /** performance.now() when sent and when answered. */
  sent: number;
  answered: number;
  status: number;
  /** The first event id of the batch. */
  firstId: string;
  retryAfter: string | null;
  body: string;
}

describe.skipIf(!available)('log mode on a JetStream cluster of 3 (stream at 3 replicas)', () => {
  const prefix = uniqueLogPrefix();
  const names = logNames(prefix);
  let cluster: NatsCluster;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let scratch: ScratchDatabase;
  let database: DatabaseHandle;
  let apiKey: string;
  let partnerDomain: string;
  const processes: ServerProcess[] = [];

  const serverEnv = () => ({
    DATABASE_URL: scratch.url,
    EVENT_LOG_URL: cluster.url,
    EVENT_LOG_PREFIX: prefix,
    EVENT_LOG_REPLICAS: '3',
    EVENT_LOG_ACK_WAIT_SECONDS: '3',
    TAG_TARGET_HOST: TEST_TARGET_HOST,
    TAG_MONITOR: 'off',
    LOG_LEVEL: 'warn',
    COLLECT_RATE_LIMIT_PER_MINUTE: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    COLLECT_TAG_EVENTS_PER_MINUTE: '0',
    COLLECT_TAG_BYTES_PER_MINUTE: '0',
    COLLECT_TAG_EVENTS_PER_DAY: '0',
    COLLECT_TAG_BYTES_PER_DAY: '0',
    COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
  });
  const start = async (role: 'api' | 'writer') => {
    const p = await spawnServer({ ...serverEnv(), ROLE: role }, 60_000);
    processes.push(p);
    return p;
  };

  /** The stream's info from the cluster, or undefined while it does not answer (an election). */
  const streamInfo = () =>
    Promise.race([
      jsm.streams.info(names.stream),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 3_000)),
    ]).catch(() => undefined);

  beforeAll(async () => {
    cluster = await startNatsCluster({ clusterName: `c_${prefix}` });
    nc = await connect({
      servers: cluster.url.split(','),
      timeout: 3_000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    jsm = await jetstreamManager(nc, { timeout: 3_000 });
    scratch = await createScratchDatabase('log_cluster');
    database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 });
    partnerDomain = `p-${randomUUID().slice(0, 8)}.partner-tags-test.com`;
    apiKey = (await onboardPartner(database.db, { name: 'Cluster partner', domain: partnerDomain }, TEST_TARGET_HOST))
      .apiKey;
  }, 120_000);
  afterAll(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await nc?.close().catch(() => {});
    await cluster?.stop();
    await database?.close();
    await scratch?.drop();
  }, 60_000);

  /** A merchant with a preverified (live) tag, through the API of `server`. */
  const liveTag = async (server: ServerProcess) => {
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const merchant = (await (
      await fetch(`${server.url}/v1/partners/merchant`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Cluster shop' }),
      })
    ).json()) as { merchantId: string };
    const tag = (await (
      await fetch(`${server.url}/v1/partners/tag/generate`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ merchantId: merchant.merchantId, domain: partnerDomain }),
      })
    ).json()) as { tagId: string };
    return { merchantId: merchant.merchantId, tagId: tag.tagId };
  };

  it('leader node and a writer killed under load: every 202 stored once; only 202 or 503 + Retry-After', async () => {
    // The first process creates the stream (R3) and the consumer; the others find them.
    const apis = [await start('api')];
    const [api2, writer1, writer2] = await Promise.all([start('api'), start('writer'), start('writer')]);
    apis.push(api2!);
    const writers = [writer1!, writer2!];
    await waitFor(
      async () => {
        const info = await streamInfo();
        return info?.config.num_replicas === 3 && info.cluster?.replicas?.length === 2;
      },
      30_000,
      'the stream at 3 replicas',
    );

    const tags = [await liveTag(apis[0]!), await liveTag(apis[1]!)];
    const merchantIds = tags.map((t) => t.merchantId);
    const count = async () =>
      Number(
        rowsOf(
          await database.db.execute(
            sql`select count(*)::int as n from events where merchant_id in (${merchantIds[0]!}::uuid, ${merchantIds[1]!}::uuid)`,
          ),
        )[0]?.n,
      );
    const stored = async (id: string) =>
      rowsOf(
        await database.db.execute(
          sql`select 1 from events where merchant_id in (${merchantIds[0]!}::uuid, ${merchantIds[1]!}::uuid) and id = ${id}`,
        ),
      ).length > 0;

    // The load: 6 senders, 3 on each API process, batches of 10 distinct ids; a batch answered 503
    // is re-sent (same ids) after a short pause until answered 202, as the tag keeps and re-sends.
    const answers: Answer[] = [];
    const acknowledged = new Set<string>();
    const sentIds = new Set<string>();
    let stopping = false;
    let stoppedAt = 0;
    const senders = Array.from({ length: 6 }, async (_, sender) => {
      const api = sender % 2;
      const tag = tags[sender % tags.length]!;
      for (let i = 0; !stopping; i++) {
        const events = Array.from({ length: 10 }, (_, k) => ({ id: `c${sender}-${i}-${k}`, event_name: 'PageView' }));
        for (const e of events) sentIds.add(e.id);
        const body = JSON.stringify({ tagId: tag.tagId, events });
        const stopDeadline = () => stopping && performance.now() - stoppedAt > 30_000;
        for (;;) {
          const sent = performance.now();
          let answer: Answer;
          try {
            const res = await fetch(`${apis[api]!.url}/v1/collect`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
              signal: AbortSignal.timeout(ANSWER_DEADLINE_MS),
            });
            const text = await res.text();
            answer = {
              sender,
              api,
              sent,
              answered: performance.now(),
              status: res.status,
              firstId: events[0]!.id,
              retryAfter: res.headers.get('retry-after'),
              body: text.slice(0, 300),
            };
          } catch (error) {
            answer = {
              sender,
              api,
              sent,
              answered: performance.now(),
              status: 0,
              firstId: events[0]!.id,
              retryAfter: null,
              body: String(error),
            };
          }
          answers.push(answer);
          if (answer.status === 202) {
            for (const e of events) acknowledged.add(e.id);
            break;
          }
          if (stopDeadline()) break;
          await sleep(200);
        }
        await sleep(30);
      }
    });
    const since = (t: number) => answers.filter((a) => a.sent >= t);
    const firstAcceptedSince = (t: number, api: number) => since(t).find((a) => a.api === api && a.status === 202);

    // Steady load first.
    await waitFor(() => acknowledged.size >= 200, 30_000, 'steady load to be accepted');
    await sleep(2_000);

    // 1. The stream's leader node, killed with SIGKILL. The worst case for the writers is that it
    // leads the writers' consumer too (their pull requests die with it): the consumer's leadership
    // is stepped down until it sits there as well (each step down elects one of the other two).
    const consumerLeader = () =>
      jsm.consumers.info(names.stream, names.durable).then(
        (info) => info.cluster?.leader,
        () => undefined,
      );
    const streamLeader = async () => (await streamInfo())?.cluster?.leader;
    for (let attempt = 0; attempt < 10; attempt++) {
      const [s, c] = [await streamLeader(), await consumerLeader()];
      if (s && s === c) break;
      await nc
        .request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${names.stream}.${names.durable}`, '', { timeout: 5_000 })
        .catch(() => {});
      await waitFor(async () => Boolean(await consumerLeader()), 30_000, 'a consumer leader after a step down');
    }
    let leader: string | undefined;
    await waitFor(
      async () => {
        leader = await streamLeader();
        return Boolean(leader);
      },
      30_000,
      'the stream leader',
    );
    const consumerLeaderKilled = (await consumerLeader()) === leader;
    await sleep(1_000);
    const ackedAtLeaderKill = acknowledged.size;
    const leaderKilledAt = performance.now();
    await cluster.kill(leader!);
    await waitFor(
      async () => {
        const info = await streamInfo();
        return Boolean(info?.cluster?.leader && info.cluster.leader !== leader);
      },
      30_000,
      'a new stream leader',
    );
    const electedMs = performance.now() - leaderKilledAt;
    await waitFor(
      () => apis.every((_, api) => firstAcceptedSince(leaderKilledAt, api)),
      30_000,
      'both API processes to accept again after the leader was killed',
    );
    const firstAccepted = apis.map((_, api) => firstAcceptedSince(leaderKilledAt, api)!);
    // The writers resume too: the first batch accepted after the kill is stored.
    await waitFor(
      () => stored(firstAccepted[0]!.firstId),
      30_000,
      'an event accepted after the leader kill to be stored',
    );
    const storedAfterLeaderKillMs = performance.now() - leaderKilledAt;
    await sleep(2_000);

    // 2. A writer, killed with SIGKILL under load, holding delivered and unacknowledged messages:
    // stopped first (SIGSTOP) so that its pull requests fill its buffer, then killed mid-batch.
    const storedBeforeWriterKill = await count();
    await waitFor(
      async () => (await count()) > storedBeforeWriterKill,
      20_000,
      'the writers to be storing before one is killed',
    );
    writers[0]!.kill('SIGSTOP');
    await waitFor(
      async () =>
        ((await jsm.consumers.info(names.stream, names.durable).catch(() => undefined))?.num_ack_pending ?? 0) > 0,
      20_000,
      'messages delivered and not acknowledged',
    );
    await sleep(500);
    const writerKilledAt = performance.now();
    writers[0]!.kill('SIGKILL');
    await writers[0]!.exited;
    await sleep(2_000);

    // 3. Both back: the node (same ports and store: it catches up from the others) and a writer.
    const nodeRestartedAt = performance.now();
    await cluster.restart(leader!);
    const [, writer3] = await Promise.all([
      waitFor(
        async () => {
          const info = await streamInfo();
          const replicas = [info?.cluster?.leader, ...(info?.cluster?.replicas ?? []).map((r) => r.name)];
          return (
            replicas.includes(leader!) &&
            (info?.cluster?.replicas ?? []).length === 2 &&
            (info?.cluster?.replicas ?? []).every((r) => r.current)
          );
        },
        60_000,
        'the restarted node to be a current replica of the stream again',
      ),
      start('writer'),
    ]);
    writers.push(writer3);
    const nodeCatchUpMs = performance.now() - nodeRestartedAt;
    await sleep(3_000);

    // Stop the load (a batch being re-sent gets up to 30 s more), then drain.
    stopping = true;
    stoppedAt = performance.now();
    const ackedAtStop = acknowledged.size;
    await Promise.all(senders);
    const drainStarted = performance.now();
    await waitFor(async () => (await count()) >= acknowledged.size, 90_000, 'the log to drain into PostgreSQL');
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(names.stream, names.durable).catch(() => undefined);
        return info !== undefined && info.num_pending === 0 && info.num_ack_pending === 0;
      },
      30_000,
      'the consumer to have nothing pending',
    );
    const drainMs = performance.now() - drainStarted;
    // Deliveries past one per message: the killed writer's batch, and what the elections resent.
    const consumerEnd = await jsm.consumers.info(names.stream, names.durable);
    const streamEnd = await jsm.streams.info(names.stream);
    const redelivered = consumerEnd.delivered.consumer_seq - streamEnd.state.last_seq;
    await sleep(500);

    const rows = rowsOf(
      await database.db.execute(
        sql`select id, count(*)::int as n from events where merchant_id in (${merchantIds[0]!}::uuid, ${merchantIds[1]!}::uuid) group by id`,
      ),
    );
    const storedIds = new Set(rows.map((r) => String(r.id)));
    const duplicates = rows.reduce((sum, r) => sum + (Number(r.n) - 1), 0);
    const missing = [...acknowledged].filter((id) => !storedIds.has(id));
    const unknown = [...storedIds].filter((id) => !sentIds.has(id));

    // The 503 windows: per sender, from a first 503 to the 202 that ends the run of them.
    let longest503 = 0;
    for (let s = 0; s < 6; s++) {
      let open: number | undefined;
      for (const a of answers.filter((x) => x.sender === s)) {
        if (a.status === 503 && open === undefined) open = a.answered;
        if (a.status === 202 && open !== undefined) {
          longest503 = Math.max(longest503, a.answered - open);
          open = undefined;
        }
      }
    }
    const statuses: Record<string, number> = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const unexpected = answers.filter(
      (a) =>
        !(a.status === 202 || (a.status === 503 && Number(a.retryAfter) > 0 && a.body.includes('SERVICE_UNAVAILABLE'))),
    );
    const slowest = Math.max(...answers.map((a) => a.answered - a.sent));
    Object.assign(figures, {
      requests: answers.length,
      statuses,
      acknowledged: acknowledged.size,
      acknowledgedAtStop: ackedAtStop,
      stored: storedIds.size,
      storedNotAcknowledged: storedIds.size - [...acknowledged].filter((id) => storedIds.has(id)).length,
      duplicates,
      missing: missing.length,
      redeliveredMessages: redelivered,
      longest503WindowMs: Math.round(longest503),
      slowestAnswerMs: Math.round(slowest),
      leaderKill: {
        leader,
        alsoConsumerLeader: consumerLeaderKilled,
        electedMs: Math.round(electedMs),
        firstAcceptedMs: firstAccepted.map((a) => Math.round(a.answered - leaderKilledAt)),
        firstStoredMs: Math.round(storedAfterLeaderKillMs),
      },
      writerKillToRestartMs: Math.round(nodeRestartedAt - writerKilledAt),
      nodeCatchUpMs: Math.round(nodeCatchUpMs),
      drainMs: Math.round(drainMs),
    });
    if (unexpected.length > 0) console.log('unexpected answers:', unexpected.slice(0, 5));

    expect(unexpected).toEqual([]);
    expect(slowest).toBeLessThan(ANSWER_DEADLINE_MS);
    expect(missing).toEqual([]);
    expect(duplicates).toBe(0);
    expect(unknown).toEqual([]);
    // Recovered by themselves: the last answers of every sender are 202.
    for (let s = 0; s < 6; s++) expect(answers.filter((a) => a.sender === s).at(-1)?.status).toBe(202);
    expect(acknowledged.size).toBeGreaterThan(ackedAtLeaderKill);
  }, 300_000);
});
