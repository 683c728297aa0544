/**
 * What the browser checks share: Debian's Chromium (or `CHROMIUM_PATH`), and a
 * page watched for every request it makes and every error it logs, so a check
 * can say the page stayed offline and ran clean.
 */
import { existsSync } from 'node:fs';
import type { Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Throws, naming the fix, when there is no Chromium to run the checks in. */
export function requireChromium(): string {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return CHROMIUM;
}

/** The URLs the page requests and the errors it throws or logs, as they come. */
export function watchPage(page: Page): { requests: string[]; errors: string[] } {
  const seen = { requests: [] as string[], errors: [] as string[] };
  page.on('request', (request) => seen.requests.push(request.url()));
  page.on('pageerror', (error) => seen.errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') seen.errors.push(message.text());
  });
  return seen;
}
