import { describe, expect, it } from "vitest";
import { bandOf, sleepSpans, timelineRange, toSegment } from "./timeline";

describe("timeline", () => {
  const now = new Date(2026, 10, 21, 20, 0, 0); // local 20:00
  const range = timelineRange(now); // 08:00 today .. 08:00 tomorrow

  it("finds a sleep window that wraps midnight", () => {
    const spans = sleepSpans("23:00", "07:00", range);
    const inRange = spans.map((s) => toSegment("sleep", s, range)).filter(Boolean);
    expect(inRange.length).toBeGreaterThanOrEqual(1);
    const tonight = spans.find((s) => new Date(s.start).getDate() === 21 && new Date(s.start).getHours() === 23);
    expect(tonight).toBeTruthy();
    expect(new Date(tonight!.end).getHours()).toBe(7);
  });

  it("clamps segments to the bar and drops those outside", () => {
    const h = 3600_000;
    const seg = toSegment("training", { start: range.start - h, end: range.start + h }, range)!;
    expect(seg.left).toBe(0);
    expect(seg.width).toBeCloseTo((100 * 1) / 24);
    expect(toSegment("x", { start: range.end + h, end: range.end + 2 * h }, range)).toBeNull();
  });

  it("maps API kinds to bands", () => {
    expect(bandOf("sleep")).toBe("sleep");
    expect(bandOf("calendar")).toBe("busy");
    expect(bandOf("training")).toBe("training");
    expect(bandOf("idle")).toBe("idle");
  });
});
