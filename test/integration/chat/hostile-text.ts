/* eslint-disable no-control-regex, no-misleading-character-class -- these helpers look for control and invisible characters one by one, on purpose */
/**
 * What "clean" means in the tests of server and model text: no escape, C0/C1 control (tab and
 * newline aside), bidi control, zero-width or other invisible character, line or paragraph
 * separator, Unicode tag or variation selector anywhere in a value, keys included.
 */
import { afterEach } from 'vitest';
import type { ModelFixture } from '../../fixtures/models';
import type { ChatCore } from './helpers';

/** Escapes, C0/C1 controls (tab and newline aside), bidi, zero-width, line/paragraph separators, tags, variation selectors. */
export const HOSTILE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/u;

/** Every string (keys too) inside `value` that still carries a hostile character, with where it was. */
export function hostileStrings(value: unknown, at = '$'): string[] {
  if (typeof value === 'string') return HOSTILE.test(value) ? [`${at}: ${JSON.stringify(value).slice(0, 160)}`] : [];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [...(HOSTILE.test(k) ? [`${at} key ${JSON.stringify(k)}`] : []), ...hostileStrings(v, `${at}.${k}`)]);
}


/** The core and the loopback provider a test started, closed after each test. */
export function closedAfterEach(): { t?: ChatCore; fixture?: ModelFixture } {
  const held: { t?: ChatCore; fixture?: ModelFixture } = {};
  afterEach(async () => {
    await held.t?.core.close();
    await held.fixture?.close();
    held.t = undefined;
    held.fixture = undefined;
  });
  return held;
}
