// The settings' schema (src/kernel/settings.ts): every setting has a group, a reason and a default
// that parses; the start-up line lists only what differs from the defaults, secrets redacted.
import { describe, expect, it } from 'vitest';
import { EnvSchema, parseEnv } from '../../src/kernel/env.js';
import { defaultOf, SETTINGS } from '../../src/kernel/settings.js';
import { settingsDifferingFromDefaults, settingsLine } from '../../src/kernel/settings-summary.js';
import { PRODUCTION_KNOBS } from '../../src/kernel/test-knobs.js';

describe('the settings schema', () => {
  it('declares each setting with a one-line reason, and parses an empty environment', () => {
    for (const [name, spec] of Object.entries(SETTINGS)) {
      expect(spec.reason, name).toMatch(/^\S.{9,}$/);
      expect(spec.reason.includes('\n'), name).toBe(false);
      expect(defaultOf(spec) !== undefined || spec.defaultText !== undefined, `${name} documents its default`).toBe(
        true,
      );
    }
    const env = parseEnv({});
    expect(env.PORT).toBe(3000);
    expect(env.knobs).toEqual(PRODUCTION_KNOBS);
  });

  it('reads no test knob from the environment', () => {
    const names = Object.keys(EnvSchema.shape);
    for (const gone of ['RATE_LIMIT_WINDOW_SECONDS', 'INGEST_FLUSH_DELAY_MS', 'WEBHOOK_POLL_MS', 'WEBHOOK_TEST_WINDOW'])
      expect(names).not.toContain(gone);
    expect(parseEnv({ WEBHOOK_POLL_MS: '5', RATE_LIMIT_WINDOW_SECONDS: '1' }).knobs).toEqual(PRODUCTION_KNOBS);
  });

  it('counts an empty value as unset', () => {
    expect(parseEnv({ PORT: '', TRUST_PROXY: '' })).toMatchObject({ PORT: 3000, TRUST_PROXY: { kind: 'off' } });
  });
});

describe('the start-up settings line', () => {
  it('says so when everything is a default', () => {
    expect(settingsLine({})).toBe('settings: all defaults');
    expect(settingsLine({ PORT: '3000', TAG_RECHECK_WINDOW: '168h', LOG_LEVEL: '', PATH: '/usr/bin' })).toBe(
      'settings: all defaults',
    );
  });

  it('lists only what differs from the defaults, in schema order', () => {
    expect(settingsDifferingFromDefaults({ LOG_LEVEL: 'warn', PORT: '8080', HOST: '0.0.0.0' })).toEqual([
      'PORT=8080',
      'LOG_LEVEL=warn',
    ]);
  });

  it('shows URLs without credentials or query, and secrets as (set)', () => {
    const line = settingsLine({
      DATABASE_URL: 'postgres://app:hunter2@db.internal:5432/tags?sslmode=require',
      REDIS_URL: 'rediss://:s3cret@cache:6380',
      EVENT_LOG_URL: 'nats://u:pw@n1:4222,nats://n2:4222',
      CURSOR_SECRET: 'x'.repeat(40),
      METRICS_TOKEN: 'token-token-token-1',
    });
    expect(line).toBe(
      'settings differing from the defaults: DATABASE_URL=postgres://db.internal:5432/tags ' +
        'EVENT_LOG_URL=nats://n1:4222,nats://n2:4222 REDIS_URL=rediss://cache:6380 CURSOR_SECRET=(set) METRICS_TOKEN=(set)',
    );
    for (const secret of ['hunter2', 's3cret', 'pw@', 'xxxx', 'token-token']) expect(line).not.toContain(secret);
  });
});
