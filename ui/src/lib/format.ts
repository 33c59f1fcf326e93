// Formatting helpers shared by the pages.
import type { Window } from "./api";

export function parseTime(s: string | null | undefined): Date | null {
  if (!s) return null;
  const d = new Date(s);
  return isNaN(d.getTime()) ? null : d;
}

/** "3 min ago", "in 2 h", or a date for anything older than a week. */
export function relTime(s: string | null | undefined, now: Date = new Date()): string {
  const d = parseTime(s);
  if (!d) return "—";
  const diff = (d.getTime() - now.getTime()) / 1000;
  const abs = Math.abs(diff);
  const fmt = (v: number, unit: string) => (diff < 0 ? `${v} ${unit} ago` : `in ${v} ${unit}`);
  if (abs < 45) return diff < 0 ? "just now" : "in a moment";
  if (abs < 3600) return fmt(Math.round(abs / 60), "min");
  if (abs < 86400) return fmt(Math.round(abs / 3600), "h");
  if (abs < 7 * 86400) return fmt(Math.round(abs / 86400), "d");
  return d.toLocaleDateString();
}

export function dateTime(s: string | null | undefined): string {
  const d = parseTime(s);
  if (!d) return "—";
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function clock(s: string | null | undefined): string {
  const d = parseTime(s);
  if (!d) return "—";
  return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  const h = Math.floor(s / 3600);
  if (h < 48) return `${h} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** A number with fixed decimals (`digits` = 0: rounded, with thousands separators). */
export function num(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !isFinite(v)) return "—";
  if (digits === 0) return Math.round(v).toLocaleString();
  return v.toFixed(digits);
}

/** Seconds between two timestamps, or null. */
export function secondsBetween(a: string | null | undefined, b: string | null | undefined): number | null {
  const x = parseTime(a);
  const y = parseTime(b);
  if (!x || !y) return null;
  return Math.max(0, (y.getTime() - x.getTime()) / 1000);
}

export function apiLabel(api: string | null | undefined): string {
  switch (api) {
    case "open_ai":
    case "openai":
      return "OpenAI API";
    case "anthropic":
      return "Anthropic API";
    default:
      return api ?? "—";
  }
}

/** Progress as a 0–1 fraction; accepts either a fraction or a percentage. */
export function fraction(p: number | null | undefined): number | null {
  if (p === null || p === undefined || !isFinite(p)) return null;
  const f = p > 1 ? p / 100 : p;
  return Math.min(1, Math.max(0, f));
}

export function modeLabel(mode: string | null | undefined): string {
  switch (mode) {
    case "skills_only":
      return "Skills only";
    case "rl":
      return "RL";
    case "auto":
      return "Auto";
    default:
      return mode ?? "—";
  }
}

/** Skill versions are numbers for bundled skills and content hashes for edited ones. */
export function shortVersion(v: string | number | null | undefined): string {
  if (v === null || v === undefined || v === "") return "—";
  const s = String(v);
  return s.length > 8 ? s.slice(0, 7) + "…" : s;
}

/** Long machine ids (UUIDs, hashes) are shortened; readable ids are kept whole. */
export function shortId(id: string | null | undefined): string {
  if (!id) return "—";
  return id.length > 24 ? id.slice(0, 8) + "…" : id;
}

/** A training window in one line: its times, how far away it starts, and its source. */
export function windowText(w: Window | null | undefined): string {
  if (!w) return "none planned";
  const end = w.end ? clock(w.end) : "until you are back";
  return `${clock(w.start)}–${end} (${relTime(w.start)}) · ${w.source}`;
}
