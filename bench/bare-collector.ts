/**
 * The floor of `POST /e` (the tag's beacon on the collector host): a bare node:http server that
 * does what any collector must and nothing else: reads the body, JSON-parses it, checks its shape
 * minimally (a tagId, 1..100 events each with a string id and event_name) and answers 202 with
 * the count, storing nothing (no database, log, tag lookup, routing framework, logging or headers).
 * Driven by the same senders as the API's `/e`: its p99 is what the machine itself allows.
 */
import http from 'node:http';

const MAX_BYTES = 256 * 1024;

function valid(body: unknown): number | null {
  if (typeof body !== 'object' || body === null) return null;
  const { tagId, events } = body as { tagId?: unknown; events?: unknown };
  if (typeof tagId !== 'string' || !Array.isArray(events) || events.length < 1 || events.length > 100) return null;
  for (const event of events) {
    const e = event as { id?: unknown; event_name?: unknown } | null;
    if (typeof e !== 'object' || e === null || typeof e.id !== 'string' || typeof e.event_name !== 'string') {
      return null;
    }
  }
  return events.length;
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  if (req.method !== 'POST' || req.url !== '/e') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    let count: number | null = null;
    if (size <= MAX_BYTES) {
      try {
        count = valid(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        count = null;
      }
    }
    if (count === null) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"code":"VALIDATION_ERROR"}');
      return;
    }
    res.writeHead(202, { 'content-type': 'application/json' }).end(`{"accepted":${count}}`);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close(() => process.exit(0)));
