import { useStatus } from "../App";
import type { Status } from "../lib/api";
import { dateTime, duration, modeLabel, windowText } from "../lib/format";
import { href } from "../lib/router";
import { Badge, Card, Dot, ErrorBox, KeyValues, Kbd, Loading, Notice, PageHeader, Progress } from "../components/ui";

export function Overview() {
  const status = useStatus();
  const s = status.data;
  return (
    <div class="page" data-testid="page-overview">
      <PageHeader
        title="Overview"
        subtitle={
          s ? (
            <>
              Daemon up {duration(s.uptime_s)} · pid {s.pid} · version {s.version}
              {s.log?.bytes != null && (
                <>
                  {" "}
                  · log <span class="mono" data-testid="overview-log" title="Rotated at 4 MB; the three previous files are kept beside it">{s.log.path}</span> ({(s.log.bytes / 1048576).toFixed(1)} MB)
                </>
              )}
            </>
          ) : (
            "What MetaClaw is doing right now."
          )
        }
      />
      <ErrorBox message={status.error} />
      {!s && !status.error && <Loading what="status" />}
      {s && <Cards s={s} />}
    </div>
  );
}

function Cards({ s }: { s: Status }) {
  const pending = s.counts?.pending_proposals ?? 0;
  return (
    <div class="grid cards">
      <Card title="Mode" testid="card-mode">
        <p class="big" data-testid="overview-mode" data-mode={s.mode}>
          {modeLabel(s.mode)}
        </p>
        <div class="chips">
          <Badge tone={s.rl_enabled ? "ok" : "neutral"} testid="overview-rl">
            RL training {s.rl_enabled ? "on" : "off"}
          </Badge>
          <Badge tone={s.opd_enabled ? "ok" : "neutral"} testid="overview-opd">
            OPD {s.opd_enabled ? "on" : "off"}
          </Badge>
          {s.learning_paused && (
            <Badge tone="warn" testid="overview-paused">
              Learning paused
            </Badge>
          )}
        </div>
        <p class="muted small">
          <a href={href("settings")}>Change in Settings</a>
        </p>
      </Card>

      <Card title="Upstream LLM" testid="card-upstream">
        <p class="upstream">
          <Dot
            tone={s.upstream?.reachable === true ? "ok" : s.upstream?.reachable === false ? "error" : "neutral"}
            label={s.upstream?.reachable === true ? "reachable" : s.upstream?.reachable === false ? "unreachable" : "not checked yet"}
          />
          <span class="mono break">{s.upstream?.url || "—"}</span>
        </p>
        {(s.warnings ?? []).map((w) => (
          <Notice key={w} tone="warn" testid="overview-config-warning">
            {w} <a href={href("settings")}>Open Settings</a>
          </Notice>
        ))}
        {s.needs_onboarding && (
          <p data-testid="overview-onboarding">
            No LLM is configured yet. <a href={href("welcome")}>Set one up</a>.
          </p>
        )}
        <p class="muted small" data-testid="overview-upstream-detail">
          {s.upstream?.reachable === true
            ? s.upstream.detail || "Answering."
            : s.upstream?.reachable === false
              ? s.upstream.detail || "Not answering. Check the endpoint in Settings."
              : s.upstream?.detail || "Not checked yet."}
        </p>
      </Card>

      <Card title="Activity" testid="card-counts">
        <div class="stats">
          <Stat label="Turns today" value={s.counts?.turns_today} testid="count-turns-today" />
          <Stat label="Turns" value={s.counts?.turns} testid="count-turns" />
          <Stat label="Sessions" value={s.counts?.sessions} testid="count-sessions" link={href("sessions")} />
          <Stat label="Skills" value={s.counts?.skills} testid="count-skills" link={href("skills")} />
        </div>
      </Card>

      <Card title="Review inbox" testid="card-inbox">
        <p class="big" data-testid="overview-pending">
          {pending}
        </p>
        <p class="muted small">{pending === 1 ? "proposal waiting for review" : "proposals waiting for review"}</p>
        <a class="btn" href={href("inbox")} data-testid="overview-inbox-link">
          {pending > 0 ? "Review proposals" : "Open the inbox"}
        </a>
      </Card>

      <Card title="Training" testid="card-training">
        <TrainingSummary s={s} />
      </Card>

      <Card title="Scheduler" testid="card-scheduler">
        {s.scheduler?.enabled ? (
          <KeyValues
            rows={[
              ["State", <Badge tone="info">{s.scheduler.state || "unknown"}</Badge>, "overview-scheduler-state"],
              ["Source", s.scheduler.source || "—"],
              ["Next window", windowText(s.scheduler.next_window)],
            ]}
          />
        ) : (
          <p class="muted" data-testid="overview-scheduler-state">
            Off. It gates training to sleep, idle and free-calendar time in <strong>auto</strong> mode.
          </p>
        )}
        <p class="muted small">
          <a href={href("scheduler")}>See the timeline</a>
        </p>
      </Card>

      <Card title="Last evolution failure" testid="card-evolution" class="span-2">
        <EvolutionFailure f={s.last_evolution_failure} />
      </Card>
    </div>
  );
}

function Stat(props: { label: string; value: number | undefined; testid: string; link?: string }) {
  const v = props.value ?? "—";
  return (
    <div class="stat">
      <div class="stat-value" data-testid={props.testid}>
        {props.link ? <a href={props.link}>{v}</a> : v}
      </div>
      <div class="stat-label muted">{props.label}</div>
    </div>
  );
}

function TrainingSummary({ s }: { s: Status }) {
  const t = s.training;
  if (!s.rl_enabled && !t?.running) {
    return (
      <p class="muted" data-testid="overview-training">
        RL is off. <a href={href("settings")}>Enable it in Settings</a> to train on your sessions.
      </p>
    );
  }
  if (!t?.running) {
    return (
      <div data-testid="overview-training">
        <p>Idle{t?.step != null ? ` · last step ${t.step}` : ""}</p>
        {t?.message && <p class="muted small">{t.message}</p>}
        <p class="muted small">
          <a href={href("training")}>Training history</a>
        </p>
      </div>
    );
  }
  return (
    <div data-testid="overview-training">
      <p>
        Step {t.step ?? "?"} running{t.progress != null ? ` · ${Math.round((t.progress > 1 ? t.progress / 100 : t.progress) * 100)}%` : ""}
      </p>
      <Progress value={t.progress} label={`Training step ${t.step ?? ""} progress`} testid="overview-training-progress" />
      {t.message && <p class="muted small">{t.message}</p>}
    </div>
  );
}


function EvolutionFailure({ f }: { f: unknown }) {
  if (f === null || f === undefined || f === "") {
    return (
      <p class="muted" data-testid="overview-evolution-failure" data-empty="true">
        None. Skill distillation has not failed recently.
      </p>
    );
  }
  if (typeof f === "string") {
    return (
      <p class="text-error" data-testid="overview-evolution-failure">
        {f}
      </p>
    );
  }
  const o = f as Record<string, unknown>;
  const msg = String(o.error ?? o.message ?? o.detail ?? JSON.stringify(o));
  const when = (o.at ?? o.created_at ?? o.finished_at ?? o.started_at) as string | undefined;
  const session = o.session_id as string | undefined;
  return (
    <div data-testid="overview-evolution-failure">
      <p class="text-error">{msg}</p>
      <p class="muted small">
        {when && <>{dateTime(when)} · </>}
        {session && (
          <>
            session <a href={href("sessions", session)}>{session}</a> ·{" "}
          </>
        )}
        Check the evolver model in Settings, or retry with <Kbd>metaclaw skills distil</Kbd>.
      </p>
    </div>
  );
}
