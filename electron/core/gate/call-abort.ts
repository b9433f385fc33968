/**
 * A cheap per-call abort handle: an `AbortController` and its `AbortSignal` in one plain object.
 *
 * Why: Node's AbortController, and the SDK's one `addEventListener('abort', …)` per request, go
 * through Node's EventTarget machinery, which on a real stdio call costs more than the 2% of a
 * call that such code must be worth to stay (measured by test/bench/abort-handle.bench.ts;
 * docs/decisions/0011). A tool call through Warden needs exactly one abort handle (the gate's, for
 * "the person stopped it" / "permission revoked mid-call"), and the SDK's `Protocol.request` only
 * uses `aborted`, `reason`, `throwIfAborted()` and one `abort` listener. `CallAbort` implements
 * the `AbortSignal` interface with plain fields, so it can be handed to `ConnectionManager.call` /
 * the SDK in place of `controller.signal`, and it is its own controller (`abort(reason)`,
 * `signal`), so it can replace `new AbortController()` one for one.
 *
 * Limits: it is not a Node `AbortSignal` instance, so do not pass it to APIs that check for one
 * (`fetch`, `AbortSignal.any`, `events.addAbortListener`, stream options). `ConnectionManager`
 * only hands it to the SDK's request path, which never does.
 */

type AbortListener = Parameters<AbortSignal['addEventListener']>[1];
// Typed like AbortSignal.onabort.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type OnAbort = (this: AbortSignal, ev: Event) => any;

/** AbortController + AbortSignal in one object, with the behaviour the SDK relies on. */
export class CallAbort implements AbortSignal {
  aborted = false;
  // Typed like AbortSignal.reason (any), so a CallAbort is assignable wherever a signal is expected.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  reason: any = undefined;
  /** Usually zero or one listener (the SDK's); created on first use. */
  private listeners: AbortListener[] | undefined;
  private handler: OnAbort | null = null;
  /** The listener standing for `onabort`, registered where it was first set (as EventTarget does). */
  private handlerSlot: AbortListener | undefined;

  /** The `onabort` event handler (called in registration order with the other listeners). */
  get onabort(): OnAbort | null {
    return this.handler;
  }
  set onabort(handler: OnAbort | null) {
    // As in Node: the first assignment (even of null) fixes the handler's place among the
    // listeners; later assignments only swap what runs there.
    this.handler = typeof handler === 'function' ? handler : null;
    if (!this.handlerSlot) {
      this.handlerSlot = (event: Event) => this.handler?.call(this, event);
      this.addEventListener('abort', this.handlerSlot);
    }
  }

  /** The signal side of this controller: the object itself (as `controller.signal`). */
  get signal(): AbortSignal {
    return this;
  }

  /**
   * Aborts once: sets `aborted` and `reason` (a DOMException AbortError when none is given,
   * like AbortController), then calls each listener (and `onabort`) once, in registration order.
   *
   * Why: the gate's stop/revoke path; the SDK's listener then sends notifications/cancelled.
   */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    const event = new Event('abort');
    if (listeners) for (const l of listeners) this.report(() => (typeof l === 'function' ? (l as (e: Event) => unknown).call(this, event) : l.handleEvent(event)));
  }

  /**
   * Throws `reason` if aborted.
   *
   * Why: part of AbortSignal; the SDK calls it before sending a request.
   */
  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /**
   * Registers an 'abort' listener (other event types never fire). A listener added twice is
   * kept once, and one added after the abort is never called — as with EventTarget.
   *
   * Why: the SDK's request registers its cancel function here.
   */
  addEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort' || listener === null || this.aborted) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  /**
   * Removes an 'abort' listener.
   *
   * Why: part of the AbortSignal interface.
   */
  removeEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort' || listener === null || !this.listeners) return;
    const i = this.listeners.indexOf(listener);
    if (i !== -1) this.listeners.splice(i, 1);
  }

  /**
   * Dispatching is not supported: the only event is the one `abort()` fires.
   *
   * Why: part of the AbortSignal interface; refusing is clearer than a silent no-op.
   */
  dispatchEvent(): boolean {
    throw new Error('CallAbort does not dispatch events; call abort(reason)');
  }

  /** A listener that throws does not stop the others; its error surfaces like EventTarget's (uncaught, later). */
  private report(run: () => unknown): void {
    try {
      run();
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}
