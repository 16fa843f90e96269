export * from './api-keys.js';
export * from './event-day-counts.js';
export * from './event-seqs.js';
export * from './events.js';
export * from './idempotency-keys.js';
export * from './merchants.js';
export * from './partners.js';
export * from './tags.js';
