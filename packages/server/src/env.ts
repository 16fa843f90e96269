import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** Repository root: `.data/` (the embedded database's default home) lives there. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);

/** `ip[:port]` entries, comma-separated; IPv6 with a port as `[::1]:5353`. */
const DnsServers = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  )
  .refine(
    (entries) =>
      entries.every((entry) => {
        const v6 = /^\[(.+)\](?::(\d+))?$/.exec(entry);
        const [host, port] = v6 ? [v6[1], v6[2]] : (entry.split(':') as [string, string?]);
        if (!host || isIP(host) === 0) return isIP(entry) === 6;
        return port === undefined || (/^\d+$/.test(port) && Number(port) > 0 && Number(port) < 65536);
      }),
    { message: 'must be comma-separated ip[:port] entries, e.g. 1.1.1.1,127.0.0.1:5353' },
  );

const hostName = z
  .string()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]$/i, {
    message: 'must be a host name such as tags.example.com',
  })
  .transform((value) => value.toLowerCase());

export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).default(3000)),
  HOST: z.preprocess(emptyAsUndefined, z.string().default('0.0.0.0')),
  DATABASE_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// or postgresql:// URL' })
      .optional(),
  ),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default(path.join(REPO_ROOT, '.data'))),
  TAG_TARGET_HOST: z.preprocess(emptyAsUndefined, hostName.default('tags.partner-tags.example')),
  DNS_SERVERS: z.preprocess(emptyAsUndefined, DnsServers.optional()),
  DNS_TIMEOUT_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(30_000).default(3000)),
  LOG_LEVEL: z.preprocess(
    emptyAsUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
  PUBLIC_BASE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
});

export type Env = z.infer<typeof EnvSchema>;

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
  return result.data;
}
