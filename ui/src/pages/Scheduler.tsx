import { useEffect, useMemo, useState } from "preact/hooks";
import { api, type Scheduler } from "../lib/api";
import { useLive } from "../lib/events";
import { clock, dateTime, relTime } from "../lib/format";
import { useResource } from "../lib/resource";
import { href } from "../lib/router";
import { bandOf, hourTicks, sleepSpans, timelineRange, toSegment, type Segment } from "../lib/timeline";
import { Badge, Card, Empty, ErrorBox, KeyValues, Kbd, Loading, PageHeader } from "../components/ui";

const BAND_LABEL: Record<string, string> = {
  sleep: "Sleep hours",
  busy: "Calendar busy",
  training: "Training window",
  idle: "Idle",
  other: "Other",
};

export function SchedulerPage() {
  const sched = useResource(() => api.scheduler(), []);
  useLive(["state", "training"], () => void sched.reload());
  const s = sched.data;
  return (
    <div class="page" data-testid="page-scheduler">
      <PageHeader title="Scheduler" subtitle="When MetaClaw may train: sleep hours, idle time, and the gaps in your calendar." />
      <ErrorBox message={sched.error} />
      {!s && !sched.error && <Loading what="scheduler" />}
      {s && !s.enabled && (
        <Empty title="The scheduler is off." testid="scheduler-off">
          <p>
            It decides when RL training may run without getting in your way. It runs in <strong>auto</strong> mode (or with{" "}
            <Kbd>scheduler.enabled: true</Kbd>): <a href={href("settings")}>switch the mode to auto in Settings</a>.
          </p>
        </Empty>
      )}
      {s && (
        <>
          {s.enabled && (
            <Card testid="scheduler-state">
              <KeyValues
                rows={[
                  ["State", <Badge tone="info">{s.state || "unknown"}</Badge>, "scheduler-state-value"],
                  ["Current source", s.source || "—"],
                  [
                    "Next window",
                    s.next_window ? (
                      <>
                        {clock(s.next_window.start)}–{clock(s.next_window.end)} <span class="muted">({relTime(s.next_window.start)}{s.next_window.source ? ` · ${s.next_window.source}` : ""})</span>
                      </>
                    ) : (
                      "none planned"
                    ),
                  ],
                ]}
              />
            </Card>
          )}
          <Card title="Last 12 hours and next 12 hours" testid="scheduler-timeline">
            <Timeline s={s} />
          </Card>
          <div class="grid cards">
            <Card title="Sleep hours" testid="source-sleep">
              {s.sources?.sleep ? (
                <p>
                  <strong>{s.sources.sleep.start}</strong> to <strong>{s.sources.sleep.end}</strong>
                  <span class="muted small"> (local time)</span>
                </p>
              ) : (
                <p class="muted">Not set. Add <Kbd>scheduler.sleep_start</Kbd> and <Kbd>scheduler.sleep_end</Kbd> (HH:MM) to config.yaml.</p>
              )}
            </Card>
            <Card title="Idle detection" testid="source-idle">
              {s.sources?.idle ? (
                s.sources.idle.available === null || s.sources.idle.available === undefined ? (
                  <p>
                    Threshold: <strong>{s.sources.idle.threshold_minutes} min</strong> without keyboard or mouse input.{" "}
                    <span class="muted">Whether idle time can be read here is known once the scheduler runs.</span>
                  </p>
                ) : s.sources.idle.available ? (
                  <p>
                    Trains after <strong>{s.sources.idle.threshold_minutes} min</strong> without keyboard or mouse input.
                  </p>
                ) : (
                  <p class="muted" data-testid="idle-unavailable">
                    Not available on this machine (no graphical session, so idle time can't be read). Sleep hours and the calendar still work.
                  </p>
                )
              ) : (
                <p class="muted">Not configured.</p>
              )}
            </Card>
            <Card title="Calendar" testid="source-calendar">
              {s.sources?.calendar && (s.sources.calendar.paths?.length || s.sources.calendar.urls?.length) ? (
                <ul class="list">
                  {[...(s.sources.calendar.paths ?? []), ...(s.sources.calendar.urls ?? [])].map((c) => (
                    <li key={c} class="mono small break">
                      {c}
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="muted" data-testid="calendar-empty">
                  No calendar. Add .ics files or URLs under <Kbd>scheduler.calendar</Kbd> in config.yaml so MetaClaw never trains during a meeting.
                </p>
              )}
            </Card>
          </div>
        </>
      )}
    </div>
  );
}

function useNow(ms = 60_000): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const t = setInterval(() => setNow(new Date()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

function Timeline({ s }: { s: Scheduler }) {
  const now = useNow();
  const range = useMemo(() => timelineRange(now), [now]);
  const segments = useMemo(() => {
    const out: Segment[] = [];
    const hasSleepEntries = (s.timeline ?? []).some((e) => bandOf(e.kind) === "sleep");
    if (s.sources?.sleep && !hasSleepEntries) {
      for (const sp of sleepSpans(s.sources.sleep.start, s.sources.sleep.end, range)) {
        const seg = toSegment("sleep", sp, range);
        if (seg) out.push(seg);
      }
    }
    for (const e of s.timeline ?? []) {
      const a = Date.parse(e.start);
      const b = Date.parse(e.end);
      if (isNaN(a) || isNaN(b)) continue;
      const seg = toSegment(bandOf(e.kind), { start: a, end: b }, range);
      if (seg) out.push(seg);
    }
    if (s.next_window) {
      const a = Date.parse(s.next_window.start);
      const b = Date.parse(s.next_window.end);
      const seg = !isNaN(a) && !isNaN(b) ? toSegment("next", { start: a, end: b }, range) : null;
      if (seg) out.push(seg);
    }
    return out;
  }, [s, range]);
  const ticks = useMemo(() => hourTicks(range, 3), [range]);
  const bands = ["sleep", "busy", "training", "idle", "next"] as const;
  const present = new Set(segments.map((x) => x.kind));
  const lanes = bands.filter((b) => present.has(b));

  return (
    <div class="timeline" data-testid="timeline">
      <div class="timeline-bar" role="img" aria-label={`24-hour timeline with ${segments.length} blocks; the table below lists them.`}>
        {(lanes.length ? lanes : ["empty" as const]).map((band) => (
          <div key={band} class={`timeline-lane lane-${band}`}>
            <span class="lane-label">{band === "empty" ? "" : band === "next" ? "Next window" : BAND_LABEL[band]}</span>
            <div class="lane-track">
            {segments
              .filter((x) => x.kind === band)
              .map((x, i) => (
                <div
                  key={i}
                  class={`timeline-seg seg-${x.kind}`}
                  style={{ left: `${x.left}%`, width: `${Math.max(x.width, 0.4)}%` }}
                  title={`${band === "next" ? "Next window" : BAND_LABEL[band]}: ${clock(x.start.toISOString())}–${clock(x.end.toISOString())}`}
                  data-testid={`seg-${x.kind}`}
                />
              ))}
            </div>
          </div>
        ))}
        <div class="timeline-now" aria-hidden="true">
          <span>now</span>
        </div>
      </div>
      <div class="timeline-ticks" aria-hidden="true">
        {ticks.map((t) => (
          <span key={t.left} style={{ left: `${t.left}%` }}>
            {t.label}
          </span>
        ))}
      </div>
      <ul class="legend">
        {bands.map((b) => (
          <li key={b} class={present.has(b) ? "" : "legend-absent"}>
            <span class={`swatch seg-${b}`} aria-hidden="true" /> {b === "next" ? "Next window" : BAND_LABEL[b]}
          </li>
        ))}
      </ul>
      {segments.length === 0 ? (
        <p class="muted" data-testid="timeline-empty">
          Nothing in the last or next 12 hours: no sleep hours configured, no calendar events, and no training windows.
        </p>
      ) : (
        <details>
          <summary>Blocks as a list</summary>
          <table class="table small">
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">From</th>
                <th scope="col">To</th>
              </tr>
            </thead>
            <tbody>
              {[...segments]
                .sort((a, b) => a.start.getTime() - b.start.getTime())
                .map((x, i) => (
                  <tr key={i}>
                    <td>{x.kind === "next" ? "Next window" : BAND_LABEL[x.kind] ?? x.kind}</td>
                    <td>{dateTime(x.start.toISOString())}</td>
                    <td>{dateTime(x.end.toISOString())}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </details>
      )}
    </div>
  );
}
