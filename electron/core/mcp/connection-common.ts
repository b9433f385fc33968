/** Small pieces the files of one connection share (connection.ts, transports.ts, tool-listing.ts, tool-call.ts, contract-diff.ts). */

/** Most of a server's text kept for each use (names, descriptions, instructions, messages), in UTF-8 bytes. */
export const TEXT_LIMITS = { name: 256, description: 8 * 1024, instructions: 16 * 1024, message: 8 * 1024, note: 1024 } as const;

/** An error's message, or the thrown value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `promise`, or a rejection after `ms` (with `message` and the time, or the error `message` makes). */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string | (() => Error)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(typeof message === 'function' ? message() : new Error(`${message} after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
