/**
 * The baseline for merchant-list throughput: a bare node:http server that answers
 * `GET /v1/partners/merchant?page&limit` for one partner (PARTNER_ID) with the same statement the
 * API's merchant list runs (`merchantListSql`: the page with its tags as JSON, and the count) and
 * the same JSON body, and nothing else: no authentication, validation, routing framework, logging
 * or security headers.
 */
import http from 'node:http';
import postgres from 'postgres';
import { merchantListSql } from '../packages/server/src/services/merchant/list-merchants.js';

const url = process.env.DATABASE_URL ?? '';
const partnerId = process.env.PARTNER_ID ?? '';
if (!url || !partnerId) throw new Error('DATABASE_URL and PARTNER_ID are required');
const sql = postgres(url, { max: Number(process.env.DB_POOL_MAX ?? 6), onnotice: () => {} });

async function listMerchants(page: number, limit: number) {
  const query = merchantListSql(partnerId, { page, limit });
  // Prepared, as the API server sends it (postgres.js `unsafe` alone would parse and plan each time).
  const [row] = await sql.unsafe(query.sql, query.params as never[], { prepare: true });
  const total = Number(row?.total ?? 0);
  const totalPages = Math.ceil(total / limit);
  return {
    merchants: row ? JSON.parse(row.merchants as string) : [],
    pagination: {
      currentPage: page,
      itemsPerPage: limit,
      totalItems: total,
      total,
      totalPages,
      hasNextPage: page < totalPages,
      hasPreviousPage: page > 1,
    },
  };
}

const server = http.createServer((req, res) => {
  const parsed = new URL(req.url ?? '/', 'http://localhost');
  if (parsed.pathname === '/healthz') {
    res.end('ok');
    return;
  }
  const page = Number(parsed.searchParams.get('page') ?? 1);
  const limit = Number(parsed.searchParams.get('limit') ?? 10);
  listMerchants(page, limit).then(
    (body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    },
    (error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    },
  );
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void sql.end({ timeout: 2 }).then(() => process.exit(0));
});
