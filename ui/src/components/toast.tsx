// Transient notices ("Approved … → v2", with an optional action such as Undo), announced politely.
import { useEffect, useState } from "preact/hooks";

export interface Toast {
  id: number;
  tone: "ok" | "error" | "info";
  text: string;
  action?: { label: string; run: () => void };
}

let nextId = 1;
let toasts: Toast[] = [];
const listeners = new Set<(t: Toast[]) => void>();

function emit() {
  for (const fn of listeners) fn(toasts);
}

export function toast(text: string, tone: Toast["tone"] = "ok", action?: Toast["action"], ms = 6000) {
  const t: Toast = { id: nextId++, tone, text, action };
  toasts = [...toasts.slice(-3), t];
  emit();
  setTimeout(() => dismiss(t.id), tone === "error" ? ms * 2 : ms);
}

export function dismiss(id: number) {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

export function Toasts() {
  const [list, setList] = useState<Toast[]>(toasts);
  useEffect(() => {
    listeners.add(setList);
    return () => {
      listeners.delete(setList);
    };
  }, []);
  return (
    <div class="toasts" aria-live="polite" aria-atomic="false">
      {list.map((t) => (
        <div key={t.id} class={`toast toast-${t.tone}`} data-testid="toast" role={t.tone === "error" ? "alert" : "status"}>
          <span>{t.text}</span>
          {t.action && (
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                dismiss(t.id);
                t.action!.run();
              }}
            >
              {t.action.label}
            </button>
          )}
          <button type="button" class="btn-icon" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
