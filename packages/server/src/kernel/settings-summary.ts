import { EnvSchema } from './env.js';
import { SETTINGS, type SettingName, type SettingSpec } from './settings.js';

/** A URL as the start-up line may show it: scheme, host, port and path; never credentials or query. */
function redactUrl(value: string): string {
  return value
    .split(',')
    .map((part) => {
      try {
        const url = new URL(part.trim());
        return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
      } catch {
        return '(set)';
      }
    })
    .join(',');
}

function shown(spec: SettingSpec, value: string): string {
  if (spec.redact === 'hidden') return '(set)';
  if (spec.redact === 'url') return redactUrl(value);
  return value;
}

/**
 * The settings `source` sets to something other than their default, as `NAME=value` (secrets
 * redacted), in the order of settings.ts. A value equal to the default once parsed (`60s` for
 * `1m`) is not listed. `source` has already passed parseEnv.
 */
export function settingsDifferingFromDefaults(source: Record<string, string | undefined>): string[] {
  const lines: string[] = [];
  for (const [name, spec] of Object.entries(SETTINGS) as [SettingName, SettingSpec][]) {
    const value = source[name];
    if (value === undefined || value === '') continue;
    const field = EnvSchema.shape[name];
    const same = JSON.stringify(field.parse(value)) === JSON.stringify(field.parse(undefined));
    if (!same) lines.push(`${name}=${shown(spec, value)}`);
  }
  return lines;
}

/** The start-up line's message: what differs from the defaults, or that nothing does. */
export function settingsLine(source: Record<string, string | undefined> = process.env): string {
  const lines = settingsDifferingFromDefaults(source);
  return lines.length === 0 ? 'settings: all defaults' : `settings differing from the defaults: ${lines.join(' ')}`;
}
