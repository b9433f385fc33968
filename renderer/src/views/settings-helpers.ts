/**
 * Pure helpers of the Settings view (kept out of .tsx so unit tests can import them): durations
 * in words and the approval-expiry choices.
 */
import { APPROVAL_EXPIRY_MAX_MS, APPROVAL_EXPIRY_MIN_MS } from '../../../shared/contract/settings';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The expiry choices offered, in milliseconds: 1 minute to 24 hours. */
export const EXPIRY_CHOICES_MS: readonly number[] = [1, 2, 5, 10, 15, 30, 60, 120, 240, 480, 1440].map((m) => m * MINUTE);

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "10 minutes", "1 hour", "1 hour 30 minutes", "45 seconds", "1 day". */
export function formatDuration(ms: number): string {
  if (ms < MINUTE) return plural(Math.round(ms / 1000), 'second');
  if (ms === 24 * HOUR) return '1 day';
  const hours = Math.floor(ms / HOUR);
  const minutes = Math.round((ms % HOUR) / MINUTE);
  if (hours === 0) return plural(minutes, 'minute');
  return minutes === 0 ? plural(hours, 'hour') : `${plural(hours, 'hour')} ${plural(minutes, 'minute')}`;
}

/**
 * The choices to show for the current expiry: the standard ones, plus the current value when it
 * is not one of them (set in the file by hand), so the select never shows something untrue.
 */
export function expiryChoices(currentMs: number): number[] {
  const all = new Set(EXPIRY_CHOICES_MS);
  all.add(currentMs);
  return [...all].sort((a, b) => a - b);
}

/** True when `ms` is a value `settings:set` accepts (a hand-edited value may not be). */
export function isSettableExpiry(ms: number): boolean {
  return Number.isInteger(ms) && ms >= APPROVAL_EXPIRY_MIN_MS && ms <= APPROVAL_EXPIRY_MAX_MS;
}
