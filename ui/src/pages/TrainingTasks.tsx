import { useState } from "preact/hooks";
import { api } from "../lib/api";
import { useLive } from "../lib/events";
import { useResource } from "../lib/resource";
import { Badge, Card, ErrorBox, Progress } from "../components/ui";

const pct = (v: number | null | undefined) => (v === null || v === undefined ? "–" : `${Math.round(v * 100)} %`);

/** Task rollouts (Start button, live progress, the learning curve) and adapter versions. */
export function TaskRollouts() {
  const job = useResource(() => api.job(), []);
  const adapters = useResource(() => api.adapters(), []);
  const [dir, setDir] = useState("");
  const [split, setSplit] = useState("train");
  const [evalSplit, setEvalSplit] = useState("test");
  const [steps, setSteps] = useState(5);
  const [error, setError] = useState<string | null>(null);
  useLive(["training"], () => {
    void job.reload();
    void adapters.reload();
  });

  const j = job.data;
  const start = async () => {
    setError(null);
    try {
      await api.startRollout({ dir: dir || undefined, split, steps, eval: evalSplit || undefined });
      await job.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const rollback = async (step: number) => {
    setError(null);
    try {
      await api.rollbackAdapter(step);
      await adapters.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const curve = j?.curve ?? [];
  const points = curve.map((p, i) => `${(i / Math.max(1, curve.length - 1)) * 300},${100 - p.success.rate * 100}`).join(" ");

  return (
    <>
      <Card title="Task rollout" testid="task-rollout">
        <ErrorBox message={error ?? job.error} />
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void start();
          }}
        >
          <label>
            Task folder <input value={dir} placeholder="openclaw_env_data_dir" onInput={(e) => setDir(e.currentTarget.value)} data-testid="rollout-dir" />
          </label>
          <label>
            Split <input value={split} size={8} onInput={(e) => setSplit(e.currentTarget.value)} />
          </label>
          <label>
            Steps <input type="number" min={1} value={steps} onInput={(e) => setSteps(Number(e.currentTarget.value) || 1)} />
          </label>
          <label>
            Evaluate on <input value={evalSplit} size={8} onInput={(e) => setEvalSplit(e.currentTarget.value)} />
          </label>
          <button type="submit" class="btn btn-primary" disabled={j?.running} data-testid="rollout-start">
            Start
          </button>
        </form>
        {j?.kind && (
          <div data-testid="rollout-progress">
            <p class="muted small">
              {j.kind === "eval" ? "Evaluation" : j.kind === "bench" ? "MetaClaw-Bench" : "Rollout"}: {j.phase}
              {j.steps_target ? ` — ${j.steps_done}/${j.steps_target} steps` : ""}
            </p>
            {j.running && <Progress value={j.episodes_total ? j.episodes_done / j.episodes_total : null} label="Episodes done" />}
            {j.error && <p class="notice notice-error">{j.error}</p>}
            {j.problems.map((p) => (
              <p class="muted small" key={p.line}>
                Line {p.line} skipped: {p.message}
              </p>
            ))}
            {j.warnings.map((w) => (
              <p class="notice" key={w}>
                {w}
              </p>
            ))}
          </div>
        )}
        {curve.length > 0 && (
          <div class="table-wrap" data-testid="learning-curve">
            <svg viewBox="-5 -5 310 110" width="320" height="115" role="img" aria-label="Evaluation success per training step">
              <polyline points={points} fill="none" stroke="currentColor" stroke-width="2" />
            </svg>
            <table class="table">
              <thead>
                <tr>
                  <th scope="col" class="num">Step</th>
                  <th scope="col">Adapter</th>
                  <th scope="col" class="num">Success (95 % CI)</th>
                  <th scope="col" class="num">s/step</th>
                  <th scope="col">Gate</th>
                </tr>
              </thead>
              <tbody>
                {curve.map((p) => (
                  <tr key={p.round}>
                    <td class="num">{p.round}</td>
                    <td>{p.adapter_step === null || p.adapter_step === undefined ? "–" : `v${p.adapter_step}`}</td>
                    <td class="num">
                      {pct(p.success.rate)} ({pct(p.success.low)}–{pct(p.success.high)})
                    </td>
                    <td class="num">{p.step_seconds ? p.step_seconds.toFixed(2) : "–"}</td>
                    <td class="small">{p.gate ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Card title="Adapter versions" testid="adapter-versions">
        {(adapters.data ?? []).length === 0 && <p class="muted">No adapter trained yet.</p>}
        {(adapters.data ?? []).length > 0 && (
          <div class="table-wrap">
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="num">Gate success</th>
                  <th scope="col">Why</th>
                  <th scope="col" />
                </tr>
              </thead>
              <tbody>
                {(adapters.data ?? []).map((v) => (
                  <tr key={v.step} data-testid={`adapter-${v.step}`}>
                    <td>v{v.step}</td>
                    <td>
                      <Badge tone={v.status === "serving" ? "ok" : v.status === "refused" ? "error" : "neutral"}>{v.status}</Badge>
                    </td>
                    <td class="num">{pct(v.eval_success)}</td>
                    <td class="small">{v.reason ?? ""}</td>
                    <td>
                      {v.status === "kept" && (
                        <button class="btn" onClick={() => void rollback(v.step)} data-testid={`rollback-${v.step}`}>
                          Roll back
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
