import { z } from 'zod';
import { defaultOf, SETTINGS, type SettingSpec } from './settings.js';
import { PRODUCTION_KNOBS, type TestKnobs } from './test-knobs.js';

export type { TrustProxy } from './settings.js';

type Settings = typeof SETTINGS;

/** An empty value is unset; unset takes the setting's default (as written in the environment). */
const withDefault = (spec: SettingSpec) => (value: unknown) =>
  value === undefined || value === '' ? defaultOf(spec) : value;

/** The settings' schema, one entry per declaration of settings.ts. */
export const EnvSchema = z.object(
  Object.fromEntries(
    Object.entries(SETTINGS).map(([name, spec]) => [name, z.preprocess(withDefault(spec), spec.type)]),
  ) as { [K in keyof Settings]: z.ZodPipe<z.ZodTransform<unknown, unknown>, Settings[K]['type']> },
);

/**
 * The configuration the app runs on: the settings parsed from the environment, and the test knobs
 * (production values unless a test passed its own to the app factory).
 */
export type Env = z.infer<typeof EnvSchema> & { readonly knobs: Readonly<TestKnobs> };

export class EnvError extends Error {
  override name = 'EnvError';
}

/** Parses the environment once; a bad value throws an EnvError naming every offending variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const result = EnvSchema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new EnvError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  if (result.data.ROLE !== 'all' && !result.data.EVENT_LOG_URL) {
    throw new EnvError(
      `Invalid configuration:\n  ROLE: ${result.data.ROLE} needs EVENT_LOG_URL (without the log, every process writes its own events)`,
    );
  }
  if (result.data.DATABASE_READ_URL && !result.data.DATABASE_URL) {
    throw new EnvError(
      'Invalid configuration:\n  DATABASE_READ_URL: needs DATABASE_URL (a replica of a PostgreSQL primary; the embedded PGlite has none)',
    );
  }
  return { ...result.data, knobs: PRODUCTION_KNOBS };
}

/** The env with a test's knobs over its own (none: the env as it is). */
export function withKnobs(env: Env, knobs: Partial<TestKnobs> | undefined): Env {
  return knobs ? { ...env, knobs: { ...env.knobs, ...knobs } } : env;
}
