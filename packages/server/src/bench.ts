/** What `bench/` imports from the server, through the package export `@partner/server/bench`. */
export { type Clickhouse, openClickhouse } from './db/clickhouse/client.js';
export { CLICKHOUSE_MIGRATIONS_DIR, migrateClickhouse, statementsOf } from './db/clickhouse/migrate.js';
export { openDatabase } from './db/client.js';
export { toQuery } from './db/read-rows.js';
export { encodeCursor } from './features/events/read/cursor.js';
export { eventListQueries, eventListResponse, type ListEventsParams } from './features/events/read/list-events.js';
export { merchantListSql } from './features/merchants/list-merchants.js';
export { type OnboardedPartner, onboardPartner } from './features/partners/onboard-partner.js';
export { claimDueDeliveries, releaseClaims } from './features/webhooks/delivery-queue.js';
export { enqueueWebhookEvent } from './features/webhooks/outbox.js';
export { nextPageLink } from './routes/events/next-link.js';
export { deleteLogStream } from './runtime/event-log.js';
export { freePort } from './testing/net.mjs';
export { quantile } from './testing/quantile.js';
export { SERVER_DIR, type ServerProcess, spawnServer } from './testing/server-process.js';
export { createScratchDatabase } from './testing/services.js';
export { startWebhookReceiver, type TestWebhookReceiver } from './testing/webhook-receiver.js';
