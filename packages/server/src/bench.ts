/**
 * What `bench/` (the `@partner/bench` workspace package) imports from the server, through the
 * package export `@partner/server/bench`: the statements the baselines run (so the raw SQL and the
 * bare node:http server do exactly the API's database work) and the set-up helpers. Nothing here
 * is used by the server itself.
 */
export { openDatabase } from './db/client.js';
export { toQuery } from './db/read-rows.js';
export { nextPageLink } from './routers/events/next-link.js';
export { encodeCursor } from './services/events/cursor.js';
export { deleteLogStream } from './services/events/event-log.js';
export { eventListQueries, eventListResponse, type ListEventsParams } from './services/events/list-events.js';
export { merchantListSql } from './services/merchant/list-merchants.js';
export { type OnboardedPartner, onboardPartner } from './services/partner/onboard-partner.js';
export { claimDueDeliveries, releaseClaims } from './services/webhooks/delivery-queue.js';
export { enqueueWebhookEvent } from './services/webhooks/outbox.js';
export { freePort } from './testing/net.mjs';
export { SERVER_DIR, type ServerProcess, spawnServer } from './testing/server-process.js';
export { createScratchDatabase } from './testing/services.js';
export { quantile } from './testing/stats.js';
export { startWebhookReceiver, type TestWebhookReceiver } from './testing/webhook-receiver.js';
