import { useState } from "preact/hooks";
import { api } from "../lib/api";
import { useLive } from "../lib/events";
import { useResource } from "../lib/resource";
import { Card, ErrorBox, Progress } from "../components/ui";

const ARMS = [
  { name: "baseline", label: "Baseline (skills off)" },
  { name: "skills", label: "Skills" },
  { name: "skills-rl", label: "Skills + RL" },
];

const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
const ci = (low: number, high: number) => `${pct(low)}–${pct(high)}`;

/** MetaClaw-Bench on the user's checkout: start a run, follow it, read the table per arm. */
export function BenchRun() {
  const job = useResource(() => api.job(), []);
  const [dir, setDir] = useState("");
  const [arms, setArms] = useState<string[]>(ARMS.map((a) => a.name));
  const [days, setDays] = useState("");
  const [commands, setCommands] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useLive(["training"], () => void job.reload());

  const j = job.data;
  const bench = j?.kind === "bench" ? j.bench : null;
  const start = async () => {
    setError(null);
    try {
      await api.startBench({ dir, arms, days: days ? Number(days) : undefined, allow_commands: commands });
      await job.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const toggle = (name: string) => setArms((a) => (a.includes(name) ? a.filter((x) => x !== name) : [...a, name]));

  return (
    <Card title="MetaClaw-Bench" testid="bench-run">
      <p class="muted small">
        Point at benchmark/data/metaclaw-bench-small (12 days) or metaclaw-bench (30 days) in your checkout of the MetaClaw repository. Days run one after
        another through MetaClaw as real sessions; nothing is downloaded.
      </p>
      <ErrorBox message={error ?? job.error} />
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label>
          Benchmark folder <input value={dir} size={40} required onInput={(e) => setDir(e.currentTarget.value)} data-testid="bench-dir" />
        </label>
        <label>
          Days <input type="number" min={1} value={days} placeholder="all" style={{ width: "5em" }} onInput={(e) => setDays(e.currentTarget.value)} />
        </label>
        {ARMS.map((a) => (
          <label key={a.name}>
            <input type="checkbox" checked={arms.includes(a.name)} onChange={() => toggle(a.name)} /> {a.label}
          </label>
        ))}
        <label title="file_check rounds grade files the agent writes; it can only write them with this tool (confined to the day's folder)">
          <input type="checkbox" checked={commands} onChange={(e) => setCommands(e.currentTarget.checked)} /> Let the agent run commands
        </label>
        <button type="submit" class="btn btn-primary" disabled={j?.running || arms.length === 0} data-testid="bench-start">
          Start
        </button>
      </form>
      {bench && (
        <div data-testid="bench-progress">
          <p class="muted small">
            {bench.name || "MetaClaw-Bench"}: {bench.days} days, {bench.rounds} rounds ({bench.file_check_rounds} file_check, {bench.multi_choice_rounds}{" "}
            multi_choice) — {j?.phase}
          </p>
          {j?.running && <Progress value={j.episodes_total ? j.episodes_done / j.episodes_total : null} label="Rounds done" />}
          {j?.error && <p class="notice notice-error">{j.error}</p>}
          {bench.problems.map((p) => (
            <p class="muted small" key={`${p.file}:${p.line}`}>
              {p.file}
              {p.line ? ` line ${p.line}` : ""} skipped: {p.message}
            </p>
          ))}
          {bench.warnings.map((w) => (
            <p class="notice" key={w}>
              {w}
            </p>
          ))}
        </div>
      )}
      {bench && bench.arms.length > 0 && (
        <div class="table-wrap">
          <table class="table" data-testid="bench-table">
            <thead>
              <tr>
                <th scope="col">Arm</th>
                <th scope="col" class="num">Accuracy (95 % CI)</th>
                <th scope="col" class="num">file_check passed</th>
                <th scope="col" class="num">multi_choice score</th>
                <th scope="col" class="num">multi_choice exact</th>
              </tr>
            </thead>
            <tbody>
              {bench.arms.map((a) =>
                a.not_run ? (
                  <tr key={a.arm}>
                    <td>{a.arm}</td>
                    <td colSpan={4} class="muted">
                      Not run: {a.not_run}
                    </td>
                  </tr>
                ) : (
                  <tr key={a.arm}>
                    <td>{a.arm}</td>
                    <td class="num">
                      {pct(a.accuracy.mean)} ({ci(a.accuracy.low, a.accuracy.high)}), {a.accuracy.n} rounds
                    </td>
                    <td class="num">
                      {a.file_check.successes}/{a.file_check.trials} ({ci(a.file_check.low, a.file_check.high)})
                    </td>
                    <td class="num">
                      {pct(a.multi_choice.mean)} ({ci(a.multi_choice.low, a.multi_choice.high)})
                    </td>
                    <td class="num">
                      {a.multi_choice_exact.successes}/{a.multi_choice_exact.trials}
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
