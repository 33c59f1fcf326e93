// Light/dark theme: follows prefers-color-scheme unless the user picked one (kept in localStorage).
import { useEffect, useState } from "preact/hooks";

export type ThemeChoice = "system" | "light" | "dark";
export type Theme = "light" | "dark";

const KEY = "metaclaw.theme";
const listeners = new Set<() => void>();

function media(): MediaQueryList | null {
  return typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
}

export function getChoice(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    if (v === "light" || v === "dark") return v;
  } catch {
    /* storage may be unavailable */
  }
  return "system";
}

export function effectiveTheme(choice: ThemeChoice = getChoice()): Theme {
  if (choice !== "system") return choice;
  return media()?.matches ? "dark" : "light";
}

export function applyTheme() {
  const choice = getChoice();
  const root = document.documentElement;
  root.dataset.theme = effectiveTheme(choice);
  root.dataset.themeChoice = choice;
  for (const fn of listeners) fn();
}

export function setChoice(choice: ThemeChoice) {
  try {
    if (choice === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    /* ignore */
  }
  applyTheme();
}

export function initTheme() {
  applyTheme();
  media()?.addEventListener("change", applyTheme);
}

export function useTheme(): { theme: Theme; choice: ThemeChoice } {
  const [, force] = useState(0);
  useEffect(() => {
    const fn = () => force((n) => n + 1);
    listeners.add(fn);
    return () => {
      listeners.delete(fn);
    };
  }, []);
  const choice = getChoice();
  return { theme: effectiveTheme(choice), choice };
}
