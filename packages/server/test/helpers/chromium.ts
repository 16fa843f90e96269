import { existsSync } from 'node:fs';

/** Debian's Chromium (`apt-get install chromium`, done by .ci/run); never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Flags for headless Chromium on a machine with no network but loopback. */
export function chromiumArgs(...extra: string[]): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    ...extra,
  ];
}
