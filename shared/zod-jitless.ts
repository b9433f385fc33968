/**
 * Turns off zod's JIT before any schema is built. Import this FIRST in every bundle that runs in
 * the page or its preload (renderer entry, preload).
 *
 * zod 4 probes `new Function('')` when it builds its first object schema, to decide whether it may
 * compile fast parsers. The renderer's CSP (`script-src 'self'`, no 'unsafe-eval') blocks that
 * probe and reports a violation; with `jitless` zod never tries, so the page runs cleanly under
 * the strict policy instead of the policy being loosened for a library.
 */
import { z } from 'zod';

z.config({ jitless: true });
