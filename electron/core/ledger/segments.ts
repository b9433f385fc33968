/**
 * Segment files: how they are named and found. A ledger folder holds `ledger.000001.log`,
 * `ledger.000002.log`, …; a rotation writes the next one as `….log.tmp` first and renames it into
 * place, so a `.tmp` left behind is a rotation that never finished (the older segment is whole).
 */
const SEGMENT_NAME = /^ledger\.(\d{6,})\.log$/;
export const TEMP_NAME = /^ledger\.\d{6,}\.log\.tmp$/;

/** `ledger.000001.log`. */
export function segmentName(n: number): string {
  return `ledger.${String(n).padStart(6, '0')}.log`;
}

/** The number in a segment's name, or null if the name is not a segment's. */
export function segmentNumber(name: string): number | null {
  const m = SEGMENT_NAME.exec(name);
  return m ? Number(m[1]) : null;
}

/** Segment numbers present in a directory listing, ascending. */
export function segmentNumbers(names: string[]): number[] {
  return names
    .map(segmentNumber)
    .filter((n): n is number => n !== null)
    .sort((a, b) => a - b);
}
