/**
 * Launch settings for Debian's Chromium in tests (never a downloaded browser). The
 * background-networking flags keep it from reaching for Google hosts this machine cannot reach.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
