export * from './api-keys.js';
export * from './events.js';
export * from './merchants.js';
export * from './partners.js';
export * from './tags.js';
