import { useState } from "preact/hooks";
import { api, errorMessage } from "../lib/api";
import { useLive } from "../lib/events";
import { useResource } from "../lib/resource";
import { Badge, Card, ErrorBox, Progress } from "../components/ui";

const pct = (v: number) => `${Math.round(v * 100)} %`;
const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(Math.round(v * 100))} pts`;

const VERDICT: Record<string, { tone: "ok" | "error" | "neutral" | "info"; text: string }> = {
  skills_help: { tone: "ok", text: "Skills help" },
  skills_hurt: { tone: "error", text: "Skills hurt" },
  no_clear_difference: { tone: "neutral", text: "No clear difference" },
  not_enough_data: { tone: "info", text: "Not enough data" },
};

/** Skills off against skills on on the user's own tasks: the newest pair of evaluation arms,
 * and a form to run one (the evaluation never trains on or distils its tasks). */
export function SkillsComparisonCard() {
  const cmp = useResource(() => api.skillsComparison(), []);
  const job = useResource(() => api.job(), []);
  const [dir, setDir] = useState("");
  const [split, setSplit] = useState("test");
  const [error, setError] = useState<string | null>(null);
  useLive(["training"], () => {
    void job.reload();
    void cmp.reload();
  });

  const start = async () => {
    setError(null);
    try {
      await api.startEval({ dir: dir || undefined, split: split || undefined, arms: ["skills-off", "skills-on"] });
      await job.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const c = cmp.data?.comparison;
  const j = job.data;
  const verdict = c ? VERDICT[c.verdict] : null;
  return (
    <Card title="Do skills help? (off / on)" testid="skills-comparison">
      <ErrorBox message={error ?? cmp.error} />
      {!c && (
        <p class="muted" data-testid="skills-comparison-empty">
          No comparison yet. Evaluate a task folder with skills off and on: each task runs once per arm, never trained on
          or distilled.
        </p>
      )}
      {c && verdict && (
        <div data-testid="skills-comparison-result">
          <p>
            <Badge tone={verdict.tone} testid="skills-comparison-verdict">
              {verdict.text}
            </Badge>{" "}
            <span class="muted small">
              {c.task_dir} · {c.split} · {new Date(c.finished_at).toLocaleString()}
            </span>
          </p>
          <div class="table-wrap">
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Skills</th>
                  <th scope="col" class="num">Success</th>
                  <th scope="col" class="num">95 % interval</th>
                  <th scope="col" class="num">Tasks</th>
                </tr>
              </thead>
              <tbody>
                {([
                  ["off", c.off],
                  ["on", c.on],
                ] as const).map(([name, r]) => (
                  <tr key={name} data-testid={`skills-comparison-${name}`}>
                    <td>{name}</td>
                    <td class="num">{pct(r.rate)}</td>
                    <td class="num">
                      {pct(r.low)}–{pct(r.high)}
                    </td>
                    <td class="num">
                      {r.successes}/{r.trials}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {c.difference && (
            <p class="small" data-testid="skills-comparison-difference">
              With skills: {signed(c.difference.estimate)} (95 % interval {signed(c.difference.low)} to {signed(c.difference.high)}).
              {c.verdict === "not_enough_data" && ` A verdict needs at least ${cmp.data?.min_trials} tasks in each arm.`}
            </p>
          )}
        </div>
      )}
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label>
          Task folder <input value={dir} placeholder="openclaw_env_data_dir" onInput={(e) => setDir(e.currentTarget.value)} data-testid="skills-comparison-dir" />
        </label>
        <label>
          Split <input value={split} size={8} onInput={(e) => setSplit(e.currentTarget.value)} />
        </label>
        <button type="submit" class="btn" disabled={j?.running} data-testid="skills-comparison-start">
          Compare
        </button>
      </form>
      {j?.running && j.kind === "eval" && <Progress value={j.episodes_total ? j.episodes_done / j.episodes_total : null} label="Tasks evaluated" />}
    </Card>
  );
}
