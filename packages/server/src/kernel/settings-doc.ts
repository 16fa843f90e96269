import { defaultOf, SETTING_GROUPS, SETTINGS, type SettingGroup, type SettingSpec } from './settings.js';

/** Where the generated page lives, from the repository root. */
export const SETTINGS_DOC_PATH = 'docs/settings.md';

const cell = (text: string) => text.replace(/\|/g, '\\|');

function defaultCell(spec: SettingSpec): string {
  if (spec.defaultText) return cell(spec.defaultText);
  const value = defaultOf(spec);
  return value === undefined ? 'unset' : `\`${value}\``;
}

/** A markdown table with its columns padded to their widest cell, as `pnpm format` (biome) lays it out. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((text, i) => text.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
}

/** docs/settings.md as settings.ts declares it: a table per group (name, default, reason). */
export function renderSettingsDoc(): string {
  const entries = Object.entries(SETTINGS) as [string, SettingSpec][];
  const sections = (Object.entries(SETTING_GROUPS) as [SettingGroup, string][]).map(([group, title]) => {
    const rows = entries
      .filter(([, spec]) => spec.group === group)
      .map(([name, spec]) => [`\`${name}\``, defaultCell(spec), cell(spec.reason)]);
    return [`## ${title}`, '', ...table(['Setting', 'Default', 'Why / when to change it'], rows)].join('\n');
  });
  return [
    '# Settings',
    '',
    '<!-- Generated from packages/server/src/kernel/settings.ts by `pnpm docs:settings`: edit the schema, not this page. -->',
    '',
    `The server reads these ${entries.length} settings from the environment once, at start`,
    '(packages/server/src/kernel/env.ts); an invalid value stops the start with a line naming it, and',
    'an empty value counts as unset. The start-up log line `settings differing from the defaults` lists',
    'what a deployment changed (URLs without credentials, secrets as `(set)`). Durations take `ms`, `s`,',
    '`m`, `h` or `d` (`90s`, `15m`, `7d`); a bare number is seconds. Timings that only tests shrink are',
    'not settings ([decision](decisions/settings.md)).',
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}
