// Live updates: one EventSource on /api/events shared by every view.
import { useEffect, useRef, useState } from "preact/hooks";

export type EventType =
  | "turn"
  | "session_started"
  | "session_ended"
  | "proposals"
  | "skill_changed"
  | "evolution_failed"
  | "training"
  | "rl"
  | "state";

export const EVENT_TYPES: EventType[] = [
  "turn",
  "session_started",
  "session_ended",
  "proposals",
  "skill_changed",
  "evolution_failed",
  "training",
  "rl",
  "state",
];

export type LiveState = "connecting" | "live" | "offline";

type Handler = (type: EventType, data: unknown) => void;

const handlers = new Set<Handler>();
const stateListeners = new Set<(s: LiveState) => void>();
let source: EventSource | null = null;
let state: LiveState = "connecting";

function setState(s: LiveState) {
  if (s === state) return;
  state = s;
  for (const fn of stateListeners) fn(s);
}

/** Opens the stream (once). EventSource reconnects by itself after errors. */
export function connectEvents() {
  if (source || typeof EventSource === "undefined") return;
  source = new EventSource("/api/events");
  source.onopen = () => setState("live");
  source.onerror = () => setState(source && source.readyState === EventSource.CLOSED ? "offline" : "connecting");
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (ev) => {
      let data: unknown = null;
      try {
        data = JSON.parse((ev as MessageEvent).data);
      } catch {
        data = (ev as MessageEvent).data;
      }
      for (const fn of handlers) fn(type, data);
    });
  }
}

export function disconnectEvents() {
  source?.close();
  source = null;
  setState("offline");
}

export function subscribe(fn: Handler): () => void {
  handlers.add(fn);
  return () => handlers.delete(fn);
}

export function useLiveState(): LiveState {
  const [s, set] = useState(state);
  useEffect(() => {
    stateListeners.add(set);
    set(state);
    return () => {
      stateListeners.delete(set);
    };
  }, []);
  return s;
}

/**
 * Calls `refresh` when one of `types` arrives. Bursts (a turn stream, a bulk approve) are
 * coalesced into one call per 300 ms.
 */
export function useLive(types: EventType[], refresh: (type: EventType, data: unknown) => void) {
  const ref = useRef(refresh);
  ref.current = refresh;
  const key = types.join(",");
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let last: [EventType, unknown] | null = null;
    const wanted = new Set(key.split(","));
    const off = subscribe((type, data) => {
      if (!wanted.has(type)) return;
      last = [type, data];
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        if (last) ref.current(last[0], last[1]);
      }, 300);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, [key]);
}
