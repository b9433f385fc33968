/**
 * The core's outgoing event bus: main forwards these to the window, the test host to its socket.
 */
import { events, type EventName, type PayloadOf } from '../../shared/ipc';

export type EventListener = <E extends EventName>(event: E, payload: PayloadOf<E>) => void;

/** A tiny typed emitter; payloads are validated against the contract before anyone sees them. */
export class CoreEvents {
  private readonly listeners = new Set<EventListener>();

  /**
   * @param outgoing applied to every payload after it is checked, before any listener sees it
   *   (the core passes its redactor: nothing pushed to the window may carry a secret).
   */
  constructor(private readonly outgoing: <T>(payload: T) => T = (payload) => payload) {}

  /** Registers a listener for every event; returns an unsubscribe function. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Emits an event after checking its payload against the contract. */
  emit<E extends EventName>(event: E, payload: PayloadOf<E>): void {
    const parsed = this.outgoing(events[event].payload.parse(payload) as PayloadOf<E>);
    for (const l of this.listeners) l(event, parsed);
  }
}
