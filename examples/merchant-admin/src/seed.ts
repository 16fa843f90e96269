// The same demo merchant as the merchant dashboard example (the same SDK calls), so that the two
// pages show comparable numbers; one copy of it.
export { seedMerchant } from '../../merchant-dashboard/src/seed.js';
