/**
 * The baseline server: a bare node:http server that answers, for one partner (PARTNER_ID),
 * - `GET /v1/partners/merchant?page&limit` with the statement the API's merchant list runs
 *   (`merchantListSql`: the page with its tags as JSON, and the count), and
 * - `GET /v1/partners/events?merchantId&...` with the two statements the API's event list runs
 *   (`eventListQueries`: the page, and the access check with the count), in parallel, shaped by
 *   the API's own `eventListResponse` (nextCursor included),
 * over postgres.js, prepared as the server sends them, writing the same JSON bodies; and nothing
 * else: no authentication, input schema, routing framework, logging or security headers.
 */
import http from 'node:http';
import {
  eventListQueries,
  eventListResponse,
  type ListEventsParams,
  merchantListSql,
  nextPageLink,
} from '@partner/server/bench';
import { buildPagination } from '@partner/shared-schemas';
import postgres from 'postgres';
import { serveUntilTerm } from './lib/serve.js';

const url = process.env.DATABASE_URL ?? '';
const partnerId = process.env.PARTNER_ID ?? '';
if (!url || !partnerId) throw new Error('DATABASE_URL and PARTNER_ID are required');
const cursorKey = Buffer.from(process.env.CURSOR_SECRET ?? '', 'utf8');
const sql = postgres(url, { max: Number(process.env.DB_POOL_MAX ?? 6), onnotice: () => {} });
const run = (query: { sql: string; params: unknown[] }) =>
  sql.unsafe(query.sql, query.params as never[], { prepare: true });

async function listMerchants(search: URLSearchParams) {
  const page = Number(search.get('page') ?? 1);
  const limit = Number(search.get('limit') ?? 10);
  const [row] = await run(merchantListSql(partnerId, { page, limit }));
  return {
    status: 200,
    body: {
      merchants: row ? JSON.parse(row.merchants as string) : [],
      pagination: buildPagination(page, limit, Number(row?.total ?? 0)),
    },
  };
}

async function listEvents(search: URLSearchParams) {
  const params: ListEventsParams = {
    merchantId: search.get('merchantId') ?? '',
    page: Number(search.get('page') ?? 1),
    limit: Number(search.get('limit') ?? 12),
    sortOrder: search.get('sortOrder') === 'asc' ? 'asc' : 'desc',
    sortBy: search.get('sortBy') === 'event_name' ? 'event_name' : 'event_time',
    events: search.get('events') ?? undefined,
    startDate: search.get('startDate') ?? undefined,
    endDate: search.get('endDate') ?? undefined,
    cursor: search.get('cursor') ?? undefined,
  };
  const queries = eventListQueries(partnerId, params, cursorKey);
  const [count, data] = await Promise.all([run(queries.count), run(queries.data)]);
  const access = count[0];
  if (!access?.tagged) return { status: 404, body: { message: 'Merchant not found', code: 'MERCHANT_NOT_FOUND' } };
  // The same shaping as the API (at most `limit` rows, pagination, the signed nextCursor, the link).
  const body = eventListResponse(queries, params.limit, data, Number(access.total ?? 0), cursorKey);
  const { nextCursor } = body.pagination;
  return { status: 200, body, link: nextCursor === null ? undefined : nextPageLink(params, nextCursor) };
}

const server = http.createServer((req, res) => {
  const parsed = new URL(req.url ?? '/', 'http://localhost');
  if (parsed.pathname === '/healthz') {
    res.end('ok');
    return;
  }
  const handler =
    parsed.pathname === '/v1/partners/events'
      ? listEvents
      : parsed.pathname === '/v1/partners/merchant'
        ? listMerchants
        : null;
  if (!handler) {
    res.writeHead(404);
    res.end();
    return;
  }
  handler(parsed.searchParams).then(
    ({ status, body, link }: { status: number; body: unknown; link?: string | undefined }) => {
      res.writeHead(
        status,
        link ? { 'content-type': 'application/json', link } : { 'content-type': 'application/json' },
      );
      res.end(JSON.stringify(body));
    },
    (error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    },
  );
});
serveUntilTerm(server, sql);
