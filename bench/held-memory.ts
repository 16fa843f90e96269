/**
 * Issue 30, findings 2 and 3: the server's RSS while slow readers hold events, 16 KB each.
 * One server process (src/main.ts) on a scratch PostgreSQL database; a merchant with 17 MB of
 * 16 KB events; 8 event streams that never read (opened first, then the events inserted: live),
 * then 6 exports that never read. RSS (VmRSS of the process) before, after each step, and the
 * peak (VmHWM). Sockets are raw and paused: nothing is read past the kernel's buffers.
 *
 *   node --import tsx bench/held-memory.ts [--server-dir <packages/server of another checkout>]
 *
 * `--server-dir` measures another tree (e.g. a worktree of the commit before the fix) with this
 * script. Exports of one partner are capped (EXPORT_MAX_PER_PARTNER, 4 by default): the run sets
 * it to 8 so all six are open, the figure being memory per stalled reader.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createScratchDatabase, onboardPartner, openDatabase, spawnServer } from '@partner/server/bench';
import postgres from 'postgres';

const { values } = parseArgs({ options: { 'server-dir': { type: 'string' } } });
const EVENT_BYTES = 16_000;
const MERCHANT_BYTES = 17_000_000;
const STREAMS = 8;
const EXPORTS = 6;
const TARGET_HOST = 'tags.partner-tags.example';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** A GET on a raw socket that reads the response head, then nothing more (paused). */
function stalled(url: string, pathAndQuery: string, apiKey: string): Promise<{ socket: net.Socket; head: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `GET ${pathAndQuery} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${apiKey}\r\nAccept-Encoding: identity\r\n\r\n`,
      );
    });
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        socket.off('data', onData);
        socket.pause();
        resolve({ socket, head: head.slice(0, head.indexOf('\r\n')) });
      }
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

const scratch = await createScratchDatabase('held_memory');
const sql = postgres(scratch.url, { max: 2, onnotice: () => {} });
let server: Awaited<ReturnType<typeof spawnServer>> | undefined;
const sockets: net.Socket[] = [];
try {
  server = await spawnServer({
    ...(values['server-dir'] ? { cwd: path.resolve(values['server-dir']) } : {}),
    env: {
      DATABASE_URL: scratch.url,
      LOG_LEVEL: 'warn',
      TAG_TARGET_HOST: TARGET_HOST,
      RATE_LIMIT_PER_MINUTE: '0',
      TAG_MONITOR: 'off',
      WEBHOOK_DELIVERY: 'off',
      EXPORT_MAX_PER_PARTNER: '8',
    },
  });
  const pid = server.child.pid as number;
  const database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 });
  const domain = `held-${Date.now().toString(36)}.example`;
  const partner = await onboardPartner(database.db, { name: 'Held', domain }, TARGET_HOST);
  await database.close();
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server?.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${partner.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const merchantId = (await call('POST', '/v1/partners/merchant', { name: 'Big events' })).merchantId as string;
  const tag = await call('POST', '/v1/partners/tag/generate', { merchantId, domain: `shop.${domain}` });
  const tagId = (tag.tagId ?? (tag.tag as Record<string, unknown> | undefined)?.tagId) as string;
  // Warm the process (one small export and one stream) so its own start-up memory is settled.
  await (await fetch(`${server.url}/v1/partners/events/export?merchantId=${merchantId}`, {
    headers: { authorization: `Bearer ${partner.apiKey}` },
  })).text();
  await sleep(1000);
  const before = status(pid);
  console.log(`server ${server.url} pid ${pid}; RSS at rest ${mb(before.rss)}`);

  for (let i = 0; i < STREAMS; i++) {
    const s = await stalled(server.url, `/v1/partners/events/stream?merchantId=${merchantId}`, partner.apiKey);
    sockets.push(s.socket);
    if (!s.head.includes(' 200 ')) console.log(`stream ${i + 1}: ${s.head}`);
  }
  await sleep(500);
  const count = Math.ceil(MERCHANT_BYTES / EVENT_BYTES);
  // Inserted in statements of 50 (as ingestion commits them): each wakes the streams.
  for (let from = 1; from <= count; from += 50) {
    const to = Math.min(count, from + 49);
    await sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
      select ${merchantId}::uuid, 'big-' || g, ${tagId}::uuid, 'u' || (g % 97), 'PageView',
        now() - (g || ' seconds')::interval, '{"pad":"' || repeat('x', ${EVENT_BYTES - 10}) || '"}', g
      from generate_series(${from}::int, ${to}::int) g`;
    await sql`insert into event_seqs (merchant_id, last_seq) values (${merchantId}::uuid, ${to})
      on conflict (merchant_id) do update set last_seq = ${to}`;
  }
  await sleep(3000);
  const withStreams = status(pid);
  console.log(
    `${STREAMS} stalled streams after ${count} events of 16 KB (${mb(count * EVENT_BYTES)}): RSS ${mb(withStreams.rss)} (+${mb(withStreams.rss - before.rss)})`,
  );

  let refused = 0;
  for (let i = 0; i < EXPORTS; i++) {
    const s = await stalled(server.url, `/v1/partners/events/export?merchantId=${merchantId}`, partner.apiKey);
    sockets.push(s.socket);
    if (!s.head.includes(' 200 ')) {
      refused++;
      console.log(`export ${i + 1}: ${s.head}`);
    }
  }
  await sleep(4000);
  const withExports = status(pid);
  console.log(
    `+ ${EXPORTS - refused} stalled exports: RSS ${mb(withExports.rss)} (+${mb(withExports.rss - before.rss)} over rest); peak (VmHWM) ${mb(withExports.hwm)}`,
  );
} finally {
  for (const socket of sockets) socket.destroy();
  await server?.stop();
  await sql.end({ timeout: 2 });
  await scratch.drop();
}
