// Geometry of the scheduler's 24-hour timeline bar.

export interface Span {
  start: number; // ms since epoch
  end: number;
}

export interface Segment {
  kind: string;
  left: number; // percent of the bar
  width: number; // percent of the bar
  start: Date;
  end: Date;
}

export const DAY_MS = 24 * 3600 * 1000;

/** The bar shows the 24 hours centred on `now`: 12 h of history, 12 h ahead. */
export function timelineRange(now: Date): Span {
  const t = now.getTime();
  return { start: t - DAY_MS / 2, end: t + DAY_MS / 2 };
}

export function parseHHMM(s: string | null | undefined): number | null {
  if (!s) return null;
  const m = /^(\d{1,2}):(\d{2})$/.exec(s.trim());
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h > 23 || min > 59) return null;
  return h * 60 + min;
}

/** Local-time sleep intervals (possibly wrapping midnight) that touch `range`. */
export function sleepSpans(start: string, end: string, range: Span): Span[] {
  const a = parseHHMM(start);
  const b = parseHHMM(end);
  if (a === null || b === null || a === b) return [];
  const out: Span[] = [];
  const first = new Date(range.start);
  first.setHours(0, 0, 0, 0);
  first.setDate(first.getDate() - 1);
  for (let d = new Date(first); d.getTime() < range.end; d.setDate(d.getDate() + 1)) {
    const s = new Date(d);
    s.setHours(Math.floor(a / 60), a % 60, 0, 0);
    const e = new Date(d);
    e.setHours(Math.floor(b / 60), b % 60, 0, 0);
    if (b <= a) e.setDate(e.getDate() + 1); // wraps midnight: 23:00–07:00
    if (e.getTime() > range.start && s.getTime() < range.end) out.push({ start: s.getTime(), end: e.getTime() });
  }
  return out;
}

/** Clamps a span to the range and converts it to bar percentages; null when outside. */
export function toSegment(kind: string, span: Span, range: Span): Segment | null {
  const s = Math.max(span.start, range.start);
  const e = Math.min(span.end, range.end);
  if (!(e > s)) return null;
  const total = range.end - range.start;
  return {
    kind,
    left: ((s - range.start) / total) * 100,
    width: ((e - s) / total) * 100,
    start: new Date(span.start),
    end: new Date(span.end),
  };
}

/** Hour ticks every `step` hours on local-time boundaries. */
export function hourTicks(range: Span, step = 3): { left: number; label: string }[] {
  const out: { left: number; label: string }[] = [];
  const d = new Date(range.start);
  d.setMinutes(0, 0, 0);
  d.setHours(d.getHours() + 1);
  for (; d.getTime() < range.end; d.setHours(d.getHours() + 1)) {
    if (d.getHours() % step !== 0) continue;
    out.push({
      left: ((d.getTime() - range.start) / (range.end - range.start)) * 100,
      label: String(d.getHours()).padStart(2, "0") + ":00",
    });
  }
  return out;
}

/** Normalises the API's entry kinds to the three bands the bar draws. */
export function bandOf(kind: string): "sleep" | "busy" | "training" | "idle" | "other" {
  const k = kind.toLowerCase();
  if (k.includes("sleep")) return "sleep";
  if (k.includes("calendar") || k.includes("busy") || k.includes("meeting")) return "busy";
  if (k.includes("train") || k.includes("window") || k.includes("step")) return "training";
  if (k.includes("idle")) return "idle";
  return "other";
}
