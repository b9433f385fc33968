/**
 * Several observers as one: each call is watched by the first observer that can see anything of
 * it (the demo's notes store for the built-in demo, local files for a program on this computer).
 * Why the first only: each knows a different kind of server, so at most one applies to a call, and
 * a call none of them can observe pays one synchronous look per observer, nothing more.
 */
import type { CallObserver } from '../gate/ports';

/** One observer made of `observers`, asked in order. */
export function firstObserver(observers: readonly CallObserver[]): CallObserver {
  return {
    watch(call) {
      for (const o of observers) {
        const watch = o.watch(call);
        if (watch) return watch;
      }
      return null;
    },
  };
}
