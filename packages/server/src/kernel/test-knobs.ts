/**
 * Knobs that exist only so tests can shrink a timing (docs/decisions/settings.md): not settings of
 * the product, never read from the environment. Production runs on PRODUCTION_KNOBS; a test passes
 * its overrides to the app factory (`composeApp`/`startApp` option `knobs`, or the test helpers'
 * `knobs` option; a spawned server takes them through src/testing/server-entry.ts).
 */
export interface TestKnobs {
  /** Length of the rate-limit window (s); the `*_PER_MINUTE` budgets are per window. */
  rateLimitWindowSeconds: number;
  /** How long the event queue waits for more events before it writes a batch (ms). */
  ingestFlushDelayMs: number;
  /** How often the webhook worker looks for due deliveries when no commit woke it (ms). */
  webhookPollMs: number;
  /** The window of WEBHOOK_TEST_CALLS_PER_PARTNER (ms). */
  webhookTestWindowMs: number;
}

export const PRODUCTION_KNOBS: Readonly<TestKnobs> = Object.freeze({
  rateLimitWindowSeconds: 60,
  ingestFlushDelayMs: 0,
  webhookPollMs: 1_000,
  webhookTestWindowMs: 60_000,
});
