import type http from 'node:http';
import type postgres from 'postgres';

/**
 * How a baseline server of bench/ (bare-server.ts, framework-server.ts) runs: keep-alive as the
 * API's, listening on PORT and HOST as the bench's child runner gives them, and on SIGTERM closed
 * with its pool.
 */
export function serveUntilTerm(server: http.Server, sql: postgres.Sql): void {
  server.keepAliveTimeout = 5_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void sql.end({ timeout: 2 }).then(() => process.exit(0));
  });
}
