import { useEffect, useMemo, useState } from "preact/hooks";
import { api, type SchedulerView } from "../lib/api";
import { useLive } from "../lib/events";
import { clock, dateTime, windowText } from "../lib/format";
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
                  ["State", <Badge tone="info">{s.status.state}</Badge>, "scheduler-state-value"],
                  ["Current source", s.status.window?.source ?? "—"],
                  ["Next window", windowText(s.next_window)],
                  ...(s.status.blocked_reason ? [["Waiting", s.status.blocked_reason] as [string, string]] : []),
                ]}
              />
            </Card>
          )}
          <Card title="Last 12 hours and next 12 hours" testid="scheduler-timeline">
            <Timeline s={s} />
          </Card>
          <div class="grid cards">
            <Card title="Sleep hours" testid="source-sleep">
              <SleepSource s={s} />
            </Card>
            <Card title="Idle detection" testid="source-idle">
              <IdleSource s={s} />
            </Card>
            <Card title="Calendar" testid="source-calendar">
              <CalendarSource s={s} />
            </Card>
          </div>
        </>
      )}
    </div>
  );
}

function SleepSource({ s }: { s: SchedulerView }) {
  const sleep = s.status.sources.sleep;
  if (!sleep.enabled || !sleep.sleep_start || !sleep.sleep_end) {
    return (
      <p class="muted">
        Not set. Set <Kbd>scheduler.sleep_start</Kbd> and <Kbd>scheduler.sleep_end</Kbd> (HH:MM).
      </p>
    );
  }
  return (
    <>
      <p>
        <strong>{sleep.sleep_start}</strong> to <strong>{sleep.sleep_end}</strong>
        <span class="muted small"> ({s.status.time_zone})</span>
      </p>
      {sleep.problem && <p class="error small">{sleep.problem}</p>}
    </>
  );
}

function IdleSource({ s }: { s: SchedulerView }) {
  const idle = s.status.sources.idle;
  if (!idle.enabled || idle.threshold_secs == null) return <p class="muted">Not configured.</p>;
  const minutes = Math.round(idle.threshold_secs / 60);
  return (
    <>
      <p>
        Trains after <strong>{minutes} min</strong> without keyboard or mouse input, or as soon as the screen is locked{idle.open ? " (you are away now)" : ""}.
      </p>
      {idle.reading.kind !== "unknown" && (
        <p class="muted small" data-testid="idle-source">
          Idle source: {idle.source}
          {idle.reading.kind === "locked" && " — the screen is locked"}
        </p>
      )}
      {idle.reading.kind === "unknown" && (
        <p class="muted small" data-testid="idle-unavailable">
          The desktop's idle time can't be read here ({idle.reading.reason}), so time since your agent's last request counts instead.
        </p>
      )}
    </>
  );
}

function CalendarSource({ s }: { s: SchedulerView }) {
  const cal = s.status.sources.calendar;
  const sources = [...cal.files.map((f) => `${f.path} (${f.events} events)`), ...cal.urls.map((u) => `${u.url}${u.events == null ? "" : ` (${u.events} events)`}`)];
  if (!cal.enabled || sources.length === 0) {
    return (
      <p class="muted" data-testid="calendar-empty">
        No calendar. Add .ics files or URLs under <Kbd>scheduler.calendar</Kbd> so MetaClaw never trains during a meeting.
      </p>
    );
  }
  return (
    <>
      <ul class="list">
        {sources.map((c) => (
          <li key={c} class="mono small break">
            {c}
          </li>
        ))}
      </ul>
      {cal.problems.map((p) => (
        <p key={p.source} class="error small">
          {p.source}: {p.reason}
        </p>
      ))}
    </>
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

function Timeline({ s }: { s: SchedulerView }) {
  const now = useNow();
  const range = useMemo(() => timelineRange(now), [now]);
  const segments = useMemo(() => {
    const out: Segment[] = [];
    const sleep = s.status.sources.sleep;
    const hasSleepEntries = s.timeline.some((e) => bandOf(e.kind) === "sleep");
    if (sleep.enabled && sleep.sleep_start && sleep.sleep_end && !hasSleepEntries) {
      for (const sp of sleepSpans(sleep.sleep_start, sleep.sleep_end, range)) {
        const seg = toSegment("sleep", sp, range);
        if (seg) out.push(seg);
      }
    }
    for (const e of s.timeline) {
      const a = Date.parse(e.start);
      const b = Date.parse(e.end);
      if (isNaN(a) || isNaN(b)) continue;
      const seg = toSegment(bandOf(e.kind), { start: a, end: b }, range);
      if (seg) out.push(seg);
    }
    if (s.next_window?.end) {
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
