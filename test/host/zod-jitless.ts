/**
 * Turns off zod's JIT before any schema is built (test stand-in only; imported first).
 *
 * zod 4 probes `new Function('')` when it constructs its first object schema, to decide whether it
 * may compile fast parsers. Under the renderer's CSP (`script-src 'self'`, no 'unsafe-eval') that
 * probe is blocked and reported as a CSP violation. Any bundle that loads shared/ipc.ts inside the
 * page must therefore set `jitless` before the contract's schemas are created.
 */
import { z } from 'zod';

z.config({ jitless: true });
