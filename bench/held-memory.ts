/**
 * Issue 30, findings 2 and 3: the server's RSS while slow readers hold events, 16 KB each.
 * One server process (src/main.ts) on a scratch PostgreSQL database; a merchant with 17 MB of
 * 16 KB events; 8 event streams that never read (opened first, then the events inserted: live),
 * then 6 exports that never read. RSS (VmRSS of the process) before, after each step, and the
 * peak (VmHWM). Sockets are raw and paused: nothing is read past the kernel's buffers.
 *
 *   node --import tsx bench/held-memory.ts [--mb 17] [--stream-bytes N] [--held-bytes N]
 *     [--server-dir <packages/server of another checkout>]
 *
 * `--server-dir` measures another tree (e.g. a worktree of the commit before the fix) with this
 * script. Exports of one partner are capped (EXPORT_MAX_PER_PARTNER, 4 by default): the run sets
 * it to 8 so all six are open, the figure being memory per stalled reader.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createScratchDatabase, SERVER_DIR, spawnServer } from '@partner/server/bench';
import postgres from 'postgres';

const { values } = parseArgs({
  options: {
    'server-dir': { type: 'string' },
    mb: { type: 'string', default: '17' },
    // STREAM_BUFFER_BYTES and HELD_BYTES of the server (default: its own defaults).
    'stream-bytes': { type: 'string' },
    'held-bytes': { type: 'string' },
  },
});
const EVENT_BYTES = 16_000;
const MERCHANT_BYTES = Number(values.mb) * 1_000_000;
const METRICS_TOKEN = 'held-memory-bench-token-0123456789';
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
      METRICS_TOKEN,
      ...(values['stream-bytes'] ? { STREAM_BUFFER_BYTES: values['stream-bytes'] } : {}),
      ...(values['held-bytes'] ? { HELD_BYTES: values['held-bytes'] } : {}),
    },
  });
  /** The held-bytes gauge (a server without it: n/a) and the V8 heap in use. */
  const held = async () => {
    const text = await (
      await fetch(`${server?.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    const value = /^partner_tags_held_bytes (\S+)$/m.exec(text)?.[1];
    const heap = /^partner_tags_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
    return `${value === undefined ? 'n/a' : mb(Number(value))}, heap used ${heap === undefined ? 'n/a' : mb(Number(heap))}`;
  };
  const pid = server.child.pid as number;
  // Onboarded by the measured tree's own CLI: this tree's code could migrate the database further.
  const domain = `held-${Date.now().toString(36)}.example`;
  const partner = JSON.parse(
    execFileSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'onboard', '--name', 'Held', '--domain', domain, '--json'],
      {
        cwd: values['server-dir'] ? path.resolve(values['server-dir']) : SERVER_DIR,
        env: { ...process.env, DATABASE_URL: scratch.url, TAG_TARGET_HOST: TARGET_HOST, LOG_LEVEL: 'silent' },
        encoding: 'utf8',
      },
    ),
  ) as { apiKey: string };
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
  if (!merchantId || !tagId)
    throw new Error(`no merchant or tag: ${JSON.stringify(tag)}\n${server.output().slice(-3000)}`);
  // Warm the process (one small export and one stream) so its own start-up memory is settled.
  await (
    await fetch(`${server.url}/v1/partners/events/export?merchantId=${merchantId}`, {
      headers: { authorization: `Bearer ${partner.apiKey}` },
    })
  ).text();
  await sleep(1000);
  const before = status(pid);
  console.log(`server ${server.url} pid ${pid}; RSS at rest ${mb(before.rss)}; held ${await held()}`);

  for (let i = 0; i < STREAMS; i++) {
    const s = await stalled(server.url, `/v1/partners/events/stream?merchantId=${merchantId}`, partner.apiKey);
    sockets.push(s.socket);
    if (!s.head.includes(' 200 ')) console.log(`stream ${i + 1}: ${s.head}`);
  }
  await sleep(500);
  const count = Math.ceil(MERCHANT_BYTES / EVENT_BYTES);
  // Inserted in statements of 50 (as ingestion commits them): each wakes the streams. Ids through
  // event_ids first and seq left to the trigger (from the writing transaction: above the streams'
  // start), as ingestion stores them.
  for (let from = 1; from <= count; from += 50) {
    const to = Math.min(count, from + 49);
    await sql`
      with ids as (
        insert into event_ids (merchant_id, id, event_time)
        select ${merchantId}::uuid, 'big-' || g, now() - (g || ' seconds')::interval
        from generate_series(${from}::int, ${to}::int) g
        returning id, event_time
      )
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select ${merchantId}::uuid, ids.id, ${tagId}::uuid, 'u' || (substr(ids.id, 5)::int % 97), 'PageView',
        ids.event_time, '{"pad":"' || repeat('x', ${EVENT_BYTES - 10}) || '"}'
      from ids order by substr(ids.id, 5)::int`;
  }
  await sleep(3000);
  const withStreams = status(pid);
  console.log(
    `${STREAMS} stalled streams after ${count} events of 16 KB (${mb(count * EVENT_BYTES)}): RSS ${mb(withStreams.rss)} (+${mb(withStreams.rss - before.rss)}); held (gauge) ${await held()}`,
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
    `+ ${EXPORTS - refused} stalled exports: RSS ${mb(withExports.rss)} (+${mb(withExports.rss - before.rss)} over rest); peak (VmHWM) ${mb(withExports.hwm)}; held (gauge) ${await held()}`,
  );
  // How each reader ended: read what the server sent, up to 2 s a socket.
  const endings: string[] = [];
  for (const socket of sockets) {
    socket.resume();
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('latin1')).slice(-400);
    });
    await sleep(2000);
    const code = /"code":"([A-Z_]+)"/.exec(tail)?.[1];
    endings.push(code ?? (tail.includes('"complete":true') ? 'complete' : 'open'));
  }
  console.log(`endings (8 streams, then the exports): ${endings.join(' ')}`);
} finally {
  for (const socket of sockets) socket.destroy();
  await server?.stop();
  await sql.end({ timeout: 2 });
  await scratch.drop();
}
