/**
 * Runs one contract call against the core: parse the request, run the handler, check the
 * response, wrap the outcome as a Result. Sender checks happen before this, in the host that
 * received the call (main's IPC binder, or the test host's token check).
 */
import { channelNames, channels, isChannelName, type ChannelName, type RequestOf, type ResponseOf } from '../../shared/ipc';
import { fail, WardenError, type FieldIssue, type Result } from '../../shared/result';

/** One handler per contract channel. */
export type Handlers = {
  [C in ChannelName]: (request: RequestOf<C>) => Promise<ResponseOf<C>> | ResponseOf<C>;
};

/** Some of the handlers, as one module declares them. */
export type HandlerPart = Partial<Handlers>;

/**
 * Joins the handlers each module declares into one handler per contract channel, and says which
 * module owns each channel. Throws (the core does not start) when two modules declare the same
 * channel or no module declares one: with object spreading, the later module would silently win,
 * and a guarantee its code keeps (a confirmation, a check) would hold on one path and not another.
 */
export function assembleHandlers(parts: Readonly<Record<string, HandlerPart>>): { handlers: Handlers; owners: Record<ChannelName, string> } {
  const handlers: Record<string, unknown> = {};
  const owners: Record<string, string> = {};
  const twice: string[] = [];
  for (const [owner, part] of Object.entries(parts)) {
    for (const [channel, handler] of Object.entries(part)) {
      if (handler === undefined) continue;
      if (owners[channel] !== undefined) twice.push(`${channel} (by ${owners[channel]} and ${owner})`);
      owners[channel] = owner;
      handlers[channel] = handler;
    }
  }
  const missing = channelNames.filter((c) => owners[c] === undefined);
  const unknown = Object.keys(owners).filter((c) => !isChannelName(c));
  const problems = [
    ...(twice.length ? [`declared twice: ${twice.join(', ')}`] : []),
    ...(missing.length ? [`declared by no module: ${missing.join(', ')}`] : []),
    ...(unknown.length ? [`not in the contract: ${unknown.join(', ')}`] : []),
  ];
  if (problems.length) throw new WardenError('INTERNAL', `Every contract channel needs exactly one handler; ${problems.join('; ')}`);
  return { handlers: handlers as Handlers, owners: owners as Record<ChannelName, string> };
}

/** Logs unexpected failures with context; injected so tests can capture it. */
export type ErrorLogger = (context: string, error: unknown) => void;

/**
 * Parses `rawRequest` with the channel's schema, runs its handler and returns a Result.
 *
 * An unknown channel or an invalid request never reaches a handler. The response is parsed too
 * (strictly shaped schemas strip unexpected fields), so a handler cannot leak more than the
 * contract declares to the renderer.
 */
export async function dispatch(
  handlers: Handlers,
  channel: unknown,
  rawRequest: unknown,
  logError: ErrorLogger = (ctx, e) => console.error(ctx, e),
): Promise<Result<unknown>> {
  if (!isChannelName(channel)) {
    return fail('UNKNOWN_CHANNEL', `Unknown channel ${JSON.stringify(String(channel)).slice(0, 120)}`);
  }
  const spec = channels[channel];
  const parsed = spec.request.safeParse(rawRequest);
  if (!parsed.success) {
    return fail('INVALID_REQUEST', `${channel}: ${describeIssues(parsed.error.issues)}`, fieldIssues(parsed.error.issues));
  }
  let value: unknown;
  try {
    const handler = handlers[channel] as (req: unknown) => unknown;
    value = await handler(parsed.data);
  } catch (error) {
    if (error instanceof WardenError) return fail(error.code, error.message, error.fields);
    logError(`handler ${channel} failed`, error);
    return fail('INTERNAL', `${channel}: unexpected error: ${error instanceof Error ? error.message : String(error)}`);
  }
  const checked = spec.response.safeParse(value);
  if (!checked.success) {
    logError(`handler ${channel} returned a value outside the contract`, checked.error);
    return fail('INVALID_RESPONSE', `${channel}: the core produced an invalid response`);
  }
  return { ok: true, value: checked.data };
}

/**
 * The failing fields as data (at most 20), so a form can put each message next to its field.
 *
 * Why not only the text: "definition.url: …" is for logs; a person reads "URL" next to the box.
 */
export function fieldIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): FieldIssue[] {
  return issues.slice(0, 20).map((i) => ({
    path: i.path.map((p) => (typeof p === 'number' ? p : String(p))),
    message: i.message,
  }));
}

/** `servers.0.command: expected string` style text naming each failing field. */
export function describeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.map(String).join('.') : '(request)'}: ${i.message}`)
    .join('; ');
}
