// Skill health: whether turns that got a skill went worse than comparable turns without it,
// and the skills that need a look, each with what can be done about it.
import { useState } from "preact/hooks";
import { api, errorMessage, type SkillHealthReport, type SkillHealthRow, type DuplicatePair } from "../lib/api";
import { useLive } from "../lib/events";
import { relTime } from "../lib/format";
import { useResource } from "../lib/resource";
import { href } from "../lib/router";
import { Badge, Card, Empty, ErrorBox, Loading } from "../components/ui";
import { toast } from "../components/toast";

type Evidence = SkillHealthRow["evidence"];

const pct = (p: number) => `${Math.round(p * 100)} %`;
const points = (d: number) => `${d > 0 ? "+" : d < 0 ? "−" : ""}${Math.abs(Math.round(d * 100))}`;

/** One sentence a non-statistician can read; the numbers behind it stay visible. */
export function evidenceText(e: Evidence, minTurns: number): string {
  const against = e.comparison === "candidate_not_injected" ? "turns where it was a candidate but not used" : "all other turns";
  if (!e.estimate) {
    return `Not enough data: ${e.with.turns} turns with it and ${e.without.turns} ${against} (needs ${minTurns} each).`;
  }
  const est = e.estimate;
  return (
    `Something went wrong after ${pct(est.bad_rate_with)} of turns with it (${e.with.bad} of ${e.with.turns}) ` +
    `and ${pct(est.bad_rate_without)} of ${against} (${e.without.bad} of ${e.without.turns}): ` +
    `${points(est.difference)} points, 95 % interval ${points(est.low)} to ${points(est.high)}.`
  );
}

function verdictBadge(e: Evidence) {
  switch (e.verdict) {
    case "seems_to_hurt":
      return <Badge tone="error">seems to hurt</Badge>;
    case "seems_to_help":
      return <Badge tone="ok">seems to help</Badge>;
    case "no_clear_difference":
      return <Badge>no clear difference</Badge>;
    default:
      return <Badge tone="neutral">not enough data</Badge>;
  }
}

export function SkillHealthCard() {
  const report = useResource(() => api.skillHealth(), []);
  useLive(["skill_changed", "proposals"], () => void report.reload());
  const [busy, setBusy] = useState<string | null>(null);

  const act = async (key: string, what: () => Promise<unknown>, done: string) => {
    setBusy(key);
    try {
      await what();
      toast(done);
      await report.reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(null);
    }
  };
  const disable = (name: string) => act(`disable-${name}`, () => api.skillState(name, { enabled: false }), `${name} disabled`);
  const revise = (name: string) =>
    act(`revise-${name}`, () => api.reviseSkill(name), `The evolver proposed a revision of ${name}: review it in the inbox`);
  const merge = (d: DuplicatePair) =>
    act(`merge-${d.a}-${d.b}`, () => api.mergeSkills(d.a, d.b), `A merge of ${d.b} into ${d.a} is waiting in the inbox`);

  const r = report.data;
  return (
    <Card title="Skill health" testid="skill-health">
      <p class="muted small">
        For each skill: how often something went wrong (a thumbs down, the judge's low score, a correction in your next message, tool errors) after
        turns that got it, against comparable turns without it.
        {r && r.holdout_share > 0 && ` ${pct(r.holdout_share)} of conversations go without a retrieved skill to keep the comparison fair.`}
      </p>
      <ErrorBox message={report.error} />
      {!r && !report.error && <Loading what="skill health" />}
      {r && <HealthBody r={r} busy={busy} onDisable={disable} onRevise={revise} onMerge={merge} />}
    </Card>
  );
}

function HealthBody(props: {
  r: SkillHealthReport;
  busy: string | null;
  onDisable: (name: string) => void;
  onRevise: (name: string) => void;
  onMerge: (d: DuplicatePair) => void;
}) {
  const { r, busy } = props;
  const flagged = (f: string) => r.skills.filter((s) => s.flags.includes(f as SkillHealthRow["flags"][number]));
  const hurts = flagged("hurts");
  const corrected = flagged("corrected");
  const idle = flagged("idle");
  const actions = (s: SkillHealthRow, revise: boolean) => (
    <div class="row-actions">
      <a class="btn btn-small" href={href("skills", s.name)} data-testid={`health-edit-${s.name}`}>
        Edit
      </a>
      {s.enabled && (
        <button type="button" class="btn btn-small" disabled={busy !== null} onClick={() => props.onDisable(s.name)} data-testid={`health-disable-${s.name}`}>
          Disable
        </button>
      )}
      {revise && (
        <button type="button" class="btn btn-small btn-primary" disabled={busy !== null} onClick={() => props.onRevise(s.name)} data-testid={`health-revise-${s.name}`}>
          {busy === `revise-${s.name}` ? "Asking the evolver…" : "Ask the evolver for a revision"}
        </button>
      )}
    </div>
  );
  const nothing = !hurts.length && !corrected.length && !idle.length && !r.duplicates.length;
  return (
    <div class="stack">
      {nothing && (
        <Empty title="No skill needs a look." testid="health-empty">
          <p>Skills show up here when they seem to hurt, keep getting corrected, overlap, or go unused for {r.idle_days} days.</p>
        </Empty>
      )}
      {hurts.length > 0 && (
        <section data-testid="health-hurts">
          <h3>Seem to hurt</h3>
          <ul class="health-list">
            {hurts.map((s) => (
              <li key={s.name} data-testid={`health-hurts-${s.name}`}>
                <strong>{s.name}</strong> {verdictBadge(s.evidence)}
                <p class="small">{evidenceText(s.evidence, r.min_turns)}</p>
                {actions(s, s.evidence.with.corrected > 0)}
              </li>
            ))}
          </ul>
        </section>
      )}
      {corrected.length > 0 && (
        <section data-testid="health-corrected">
          <h3>Often corrected right after</h3>
          <ul class="health-list">
            {corrected.map((s) => (
              <li key={s.name} data-testid={`health-corrected-${s.name}`}>
                <strong>{s.name}</strong>{" "}
                <span class="small">
                  you corrected the agent after {s.evidence.with.corrected} of the {s.evidence.with.turns} turns it was used in
                </span>
                {actions(s, true)}
              </li>
            ))}
          </ul>
        </section>
      )}
      {r.duplicates.length > 0 && (
        <section data-testid="health-duplicates">
          <h3>Near-duplicates</h3>
          <ul class="health-list">
            {r.duplicates.map((d) => (
              <li key={`${d.a}-${d.b}`} data-testid={`health-duplicate-${d.a}-${d.b}`}>
                <strong>{d.a}</strong> and <strong>{d.b}</strong> <span class="small muted">share {pct(d.similarity)} of their words</span>
                <div class="row-actions">
                  <button type="button" class="btn btn-small btn-primary" disabled={busy !== null} onClick={() => props.onMerge(d)} data-testid={`health-merge-${d.a}-${d.b}`}>
                    {busy === `merge-${d.a}-${d.b}` ? "Asking the evolver…" : `Merge ${d.b} into ${d.a}`}
                  </button>
                  <button type="button" class="btn btn-small" disabled={busy !== null} onClick={() => props.onDisable(d.b)}>
                    Disable {d.b}
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </section>
      )}
      {idle.length > 0 && (
        <section data-testid="health-idle">
          <h3>Not used in {r.idle_days} days</h3>
          <ul class="health-list">
            {idle.map((s) => (
              <li key={s.name} data-testid={`health-idle-${s.name}`}>
                <strong>{s.name}</strong>{" "}
                <span class="small muted">{s.last_injected_at ? `last used ${relTime(s.last_injected_at)}` : "never used"}</span>
                {actions(s, false)}
              </li>
            ))}
          </ul>
        </section>
      )}
      <details data-testid="health-all">
        <summary>Evidence for every skill</summary>
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Skill</th>
              <th scope="col">Verdict</th>
              <th scope="col">Evidence</th>
            </tr>
          </thead>
          <tbody>
            {r.skills.map((s) => (
              <tr key={s.name} data-testid={`health-row-${s.name}`}>
                <td>
                  <a href={href("skills", s.name)}>{s.name}</a>
                </td>
                <td>{verdictBadge(s.evidence)}</td>
                <td class="small">{evidenceText(s.evidence, r.min_turns)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}
