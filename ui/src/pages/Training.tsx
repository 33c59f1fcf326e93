import { useEffect, useState } from "preact/hooks";
import { useStatus } from "../App";
import { api, chartUrl, type ChartName } from "../lib/api";
import { useAgent } from "../lib/agent";
import { useLive } from "../lib/events";
import { dateTime, duration, num, relTime, secondsBetween } from "../lib/format";
import { useResource } from "../lib/resource";
import { href } from "../lib/router";
import { useTheme } from "../lib/theme";
import { Badge, Card, Empty, ErrorBox, Loading, PageHeader, Progress } from "../components/ui";
import { BenchRun } from "./TrainingBench";
import { TaskRollouts } from "./TrainingTasks";

const CHARTS: { name: ChartName; title: string; alt: string }[] = [
  { name: "reward", title: "Mean reward", alt: "Mean reward per training step" },
  { name: "loss", title: "Loss", alt: "Training loss per step" },
  { name: "success_rate", title: "Success rate", alt: "Share of successful samples per step" },
  { name: "kl", title: "KL divergence", alt: "KL divergence per step" },
  { name: "prm_distribution", title: "PRM scores", alt: "Distribution of process reward model scores" },
  { name: "turns_per_day", title: "Turns per day", alt: "Turns recorded per day" },
];

export function TrainingPage() {
  const status = useStatus();
  const steps = useResource(() => api.trainingSteps(), []);
  const ckpts = useResource(() => api.checkpoints(), []);
  const { theme } = useTheme();
  const [bust, setBust] = useState(0);
  useLive(["training"], () => {
    void steps.reload();
    void ckpts.reload();
    setBust((b) => b + 1);
  });

  const s = status.data;
  const t = s?.training;
  // Checkpoints: the API's list, or (if it has none) the ones the steps name.
  const checkpoints =
    ckpts.data && ckpts.data.length > 0
      ? ckpts.data
      : (steps.data ?? []).filter((r) => r.checkpoint).map((r) => ({ name: r.checkpoint!, step: r.step, created_at: r.finished_at ?? r.started_at }));
  const rlOff = s ? !s.rl_enabled : false;
  const noSteps = steps.data !== undefined && steps.data.length === 0;
  const showEmpty = rlOff && noSteps;

  return (
    <div class="page" data-testid="page-training">
      <PageHeader title="Training" subtitle="Reinforcement learning on your own sessions: steps, charts and checkpoints." />
      <ErrorBox message={steps.error} />
      {!rlOff && <RlStartup />}
      {!rlOff && <TaskRollouts />}
      <BenchRun />
      {showEmpty && (
        <Empty title="RL is off — enable it in Settings" testid="training-empty">
          <p>
            With RL on, MetaClaw fine-tunes a LoRA on your recorded turns (in <code>auto</code> mode only during idle or sleep windows). Turn it on
            under <a href={href("settings")}>Settings</a>.
          </p>
        </Empty>
      )}

      {t?.running && (
        <Card title={`Step ${t.step ?? ""} running`} testid="training-running">
          <Progress value={t.progress} label={`Training step ${t.step ?? ""} progress`} testid="training-progress" />
          <p class="muted small">{t.message || "Training…"}</p>
        </Card>
      )}
      {s && !t?.running && !showEmpty && (
        <p class="muted" data-testid="training-idle">
          {rlOff ? "RL is off; showing past steps." : s.learning_paused ? "Learning is paused (Settings)." : t?.message || "No step running right now."}
        </p>
      )}

      {!showEmpty && (
        <div class="grid charts" data-testid="charts">
          {CHARTS.map((c) => (
            <Chart key={c.name} {...c} theme={theme} bust={bust} />
          ))}
        </div>
      )}
      {showEmpty && (
        <div class="grid charts">
          <Chart {...CHARTS[5]} theme={theme} bust={bust} />
        </div>
      )}

      {!showEmpty && (
        <Card title="Steps" testid="training-steps">
          {!steps.data && !steps.error && <Loading what="steps" />}
          {noSteps && <p class="muted">No training steps yet. The first one starts when enough turns are collected{s?.mode === "auto" ? " and a scheduler window opens" : ""}.</p>}
          {steps.data && steps.data.length > 0 && (
            <div class="table-wrap">
              <table class="table" data-testid="steps-table">
                <thead>
                  <tr>
                    <th scope="col" class="num">
                      Step
                    </th>
                    <th scope="col">Status</th>
                    <th scope="col">Started</th>
                    <th scope="col" class="num">
                      Duration
                    </th>
                    <th scope="col" class="num">
                      Loss
                    </th>
                    <th scope="col" class="num">
                      Reward
                    </th>
                    <th scope="col" class="num">
                      Success
                    </th>
                    <th scope="col" class="num">
                      KL
                    </th>
                    <th scope="col" class="num">
                      Tokens
                    </th>
                    <th scope="col">Checkpoint</th>
                  </tr>
                </thead>
                <tbody>
                  {[...steps.data]
                    .sort((a, b) => b.step - a.step)
                    .map((r) => (
                      <tr key={r.step} data-testid={`step-row-${r.step}`}>
                        <td class="num">{r.step}</td>
                        <td>
                          <Badge tone={r.status === "ok" ? "ok" : r.status === "running" ? "info" : r.status === "failed" ? "error" : "neutral"}>
                            {r.status}
                          </Badge>
                        </td>
                        <td>
                          <time dateTime={r.started_at} title={dateTime(r.started_at)}>
                            {relTime(r.started_at)}
                          </time>
                        </td>
                        <td class="num">{duration(secondsBetween(r.started_at, r.finished_at))}</td>
                        <td class="num">{num(r.loss)}</td>
                        <td class="num">{num(r.mean_reward)}</td>
                        <td class="num">{r.success_rate == null ? "—" : `${Math.round((r.success_rate > 1 ? r.success_rate / 100 : r.success_rate) * 100)}%`}</td>
                        <td class="num">{num(r.kl, 4)}</td>
                        <td class="num">{num(r.tokens, 0)}</td>
                        <td class="mono small">{r.checkpoint || "—"}</td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
      )}

      {!showEmpty && (
        <Card title="Checkpoints" testid="training-checkpoints">
          <ErrorBox message={ckpts.error} />
          {ckpts.data && checkpoints.length === 0 && <p class="muted">No checkpoints saved yet. They are written after successful steps.</p>}
          {checkpoints.length > 0 && (
            <ul class="list">
              {[...checkpoints]
                .sort((a, b) => b.step - a.step)
                .map((c) => (
                  <li key={c.name} data-testid={`checkpoint-${c.name}`}>
                    <span class="mono">{c.name}</span> <span class="muted small">step {c.step} · {relTime(c.created_at)}</span>
                  </li>
                ))}
            </ul>
          )}
        </Card>
      )}
    </div>
  );
}

function Chart(props: { name: ChartName; title: string; alt: string; theme: "light" | "dark"; bust: number }) {
  // Only the turn counts are per agent; training is of the one shared policy.
  const agent = useAgent();
  const src = chartUrl(props.name, props.theme, props.bust, props.name === "turns_per_day" ? agent : undefined);
  const [failedSrc, setFailedSrc] = useState<string | null>(null);
  const failed = failedSrc === src;
  return (
    <figure class="card chart" data-testid={`chart-${props.name}`}>
      <figcaption class="card-title">{props.title}</figcaption>
      {failed ? (
        <p class="muted small chart-missing">Chart not available yet.</p>
      ) : (
        <img
          src={src}
          alt={props.alt}
          loading="eager"
          decoding="async"
          data-testid={`chart-img-${props.name}`}
          onError={() => setFailedSrc(src)}
        />
      )}
    </figure>
  );
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

const PHASE_LABEL: Record<string, string> = { off: "Off", starting: "Starting", serving: "Serving", failed: "Failed" };

/** What the RL service is doing: its start-up steps as they happen (tokenizer, Tinker
 *  session, LoRA model, first sampler), then the sampler it serves, or why it failed. */
function RlStartup() {
  const rl = useResource(() => api.rl(), []);
  const status = useStatus();
  const phase = rl.data?.phase;
  // The status line below follows the same service: read it again when the phase moves.
  useEffect(() => {
    if (phase) void status.reload();
  }, [phase]);
  // Each start-up step is an "rl" event; while starting, a download's bytes move between
  // events, so the bar is re-read each second then (and never when nothing starts).
  useLive(["state", "training", "rl"], () => void rl.reload());
  useEffect(() => {
    if (phase !== "starting") return;
    const t = setInterval(() => void rl.reload(), 1000);
    return () => clearInterval(t);
  }, [phase]);
  const r = rl.data;
  if (!r) return null;
  const tone = r.phase === "serving" ? "ok" : r.phase === "failed" ? "error" : r.phase === "starting" ? "info" : "neutral";
  return (
    <Card title="Policy" testid="rl-startup">
      <p>
        <Badge tone={tone} testid="rl-phase">
          {PHASE_LABEL[r.phase] ?? r.phase}
        </Badge>{" "}
        <span data-testid="rl-phase-message">
          {r.phase === "serving"
            ? `${r.model ?? ""} serves chat${r.sampler ? ` from ${r.sampler}` : ""}${r.sampler_step != null ? ` (step ${r.sampler_step})` : ""}.`
            : r.message || (r.phase === "off" ? "Waiting to start." : "")}
        </span>
      </p>
      {r.phase === "starting" && r.progress && (
        <div data-testid="rl-download">
          <Progress
            value={r.progress.total_bytes ? r.progress.done_bytes / r.progress.total_bytes : null}
            label={`Downloading ${r.progress.what}`}
            testid="rl-download-progress"
          />
          <p class="muted small">
            Downloading {r.progress.what}: {megabytes(r.progress.done_bytes)}
            {r.progress.total_bytes ? ` of ${megabytes(r.progress.total_bytes)}` : ""}
          </p>
        </div>
      )}
      {r.missing.length > 0 && (
        <p class="muted small">
          Missing: {r.missing.join("; ")} — <a href={href("settings")}>Settings</a>
        </p>
      )}
    </Card>
  );
}
