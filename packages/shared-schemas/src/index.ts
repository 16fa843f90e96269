export * from './common.js';
export * from './dates.js';
export * from './errors.js';
export * from './event.js';
export * from './merchant.js';
export * from './normalize.js';
export * from './pagination.js';
export * from './tag.js';
