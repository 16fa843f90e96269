import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`, done by .ci/run); never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(`SKIPPED the browser tests: ${CHROMIUM} is absent (.ci/run installs Debian's chromium package)`);
}

/**
 * A desktop Chrome's user agent: headless Chromium's own names `HeadlessChrome`, which the
 * collectors rightly drop as a bot's.
 */
export const DESKTOP_CHROME_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

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
    `--user-agent=${DESKTOP_CHROME_UA}`,
    ...extra,
  ];
}

/** Headless Chromium with those flags and `extra`. */
export function launchChromium(...extra: string[]): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs(...extra) });
}

/** The flag sending `domain` and its subdomains to 127.0.0.1, where the test's servers listen. */
export function mapToLoopback(domain: string): string {
  return `--host-resolver-rules=MAP ${domain} 127.0.0.1, MAP *.${domain} 127.0.0.1`;
}
