import { ThumbIcon } from "../components/icons";
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, errorMessage, type Retrieval, type SkillInfo as Skill } from "../lib/api";
import { useAgent } from "../lib/agent";
import { useLive } from "../lib/events";
import { num, shortVersion } from "../lib/format";
import { useResource } from "../lib/resource";
import { href } from "../lib/router";
import { Badge, Card, Empty, ErrorBox, Kbd, Loading, PageHeader, ScoreBar, Switch } from "../components/ui";
import { toast } from "../components/toast";
import { SkillHealthCard } from "./SkillHealth";
import { SkillsComparisonCard } from "./SkillsComparison";

export function SkillsPage() {
  const [q, setQ] = useState("");
  const [debounced, setDebounced] = useState("");
  const [category, setCategory] = useState("");
  const [categories, setCategories] = useState<string[]>([]);

  useEffect(() => {
    const t = setTimeout(() => setDebounced(q.trim()), 200);
    return () => clearTimeout(t);
  }, [q]);

  const agent = useAgent();
  const list = useResource(() => api.skills(debounced || undefined, category || undefined, agent), [debounced, category, agent]);
  useLive(["skill_changed"], () => void list.reload());

  // Categories come from every list we have seen, so filtering never hides the other choices.
  useEffect(() => {
    if (!list.data) return;
    setCategories((prev) => {
      const all = new Set(prev);
      for (const s of list.data!) if (s.category) all.add(s.category);
      return [...all].sort();
    });
  }, [list.data]);

  const setState = async (s: Skill, patch: { enabled?: boolean; pinned?: boolean }) => {
    const before = list.data;
    if (before) list.set(before.map((x) => (x.name === s.name ? { ...x, ...patch } : x)));
    try {
      await api.skillState(s.name, patch);
      const what = patch.enabled !== undefined ? (patch.enabled ? "enabled" : "disabled") : patch.pinned ? "pinned" : "unpinned";
      toast(`${s.name} ${what}`);
    } catch (e) {
      if (before) list.set(before);
      toast(`Could not change ${s.name}: ${errorMessage(e)}`, "error");
    }
  };

  const filtered = !!(debounced || category);
  return (
    <div class="page" data-testid="page-skills">
      <PageHeader
        title="Skills"
        subtitle="Instructions MetaClaw injects into your agent's requests when they match."
        actions={
          <a class="btn" href={href("new-skill")} data-testid="new-skill">
            New skill
          </a>
        }
      />
      <div class="layout-2">
        <Card class="grow">
          <div class="toolbar" role="search">
            <div class="field inline">
              <label for="skill-search">Search</label>
              <input
                id="skill-search"
                type="search"
                placeholder="name, description, tag…"
                value={q}
                onInput={(e) => setQ((e.currentTarget as HTMLInputElement).value)}
                data-testid="skill-search"
              />
            </div>
            <div class="field inline">
              <label for="skill-category">Category</label>
              <select
                id="skill-category"
                value={category}
                onChange={(e) => setCategory((e.currentTarget as HTMLSelectElement).value)}
                data-testid="skill-category"
              >
                <option value="">All categories</option>
                {categories.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </div>
            {list.data && (
              <span class="muted small" aria-live="polite">
                {list.data.length} {list.data.length === 1 ? "skill" : "skills"}
              </span>
            )}
          </div>
          <ErrorBox message={list.error} />
          {!list.data && !list.error && <Loading what="skills" />}
          {list.data && list.data.length === 0 && (
            <Empty title={filtered ? "No skills match." : "No skills yet."} testid="skills-empty">
              {filtered ? (
                <p>Try another word or clear the category filter.</p>
              ) : (
                <p>
                  Install the bundled bank with <Kbd>metaclaw skills install</Kbd>, <a href={href("new-skill")}>write one</a>, or
                  approve proposals in the <a href={href("inbox")}>inbox</a>.
                </p>
              )}
            </Empty>
          )}
          {list.data && list.data.length > 0 && <SkillTable skills={list.data} onState={setState} />}
        </Card>
        <RetrievalBox />
      </div>
      <SkillHealthCard />
      <SkillsComparisonCard />
    </div>
  );
}

function SkillTable(props: { skills: Skill[]; onState: (s: Skill, p: { enabled?: boolean; pinned?: boolean }) => void }) {
  return (
    <div class="table-wrap">
      <table class="table skills-table" data-testid="skills-table">
        <thead>
          <tr>
            <th scope="col">Skill</th>
            <th scope="col">Category</th>
            <th scope="col" class="num">
              Version
            </th>
            <th scope="col" class="num" title="Turns it was injected into">
              Used
            </th>
            <th scope="col" class="num">
              <span class="nowrap" aria-hidden="true">
                <ThumbIcon size={13} /> / <ThumbIcon size={13} down />
              </span>
              <span class="sr-only">Thumbs up and down</span>
            </th>
            <th scope="col">Enabled</th>
            <th scope="col">Pinned</th>
          </tr>
        </thead>
        <tbody>
          {props.skills.map((s) => (
            <tr key={s.name} data-testid={`skill-row-${s.name}`} class={s.enabled ? "" : "row-disabled"}>
              <td>
                <a href={href("skills", s.name)} class="strong" data-testid={`skill-link-${s.name}`}>
                  {s.name}
                </a>{" "}
                {s.agent ? (
                  <>
                    <Badge tone="info">{s.agent} only</Badge> <ShareSkill name={s.name} agent={s.agent} />
                  </>
                ) : s.source === "user" ? (
                  <Badge tone="accent">yours</Badge>
                ) : (
                  <Badge>bundled</Badge>
                )}
                <div class="muted small clamp-2">{s.description}</div>
              </td>
              <td>{s.category || "—"}</td>
              <td class="num mono small" title={String(s.version)}>
                {shortVersion(s.version)}
              </td>
              <td class="num">{s.injected}</td>
              <td class="num nowrap">
                {s.thumbs_up} / {s.thumbs_down}
              </td>
              <td>
                <Switch
                  compact
                  label={`Enable ${s.name}`}
                  checked={s.enabled}
                  onChange={(v) => props.onState(s, { enabled: v })}
                  testid={`skill-enabled-${s.name}`}
                />
              </td>
              <td>
                <Switch
                  compact
                  label={`Pin ${s.name} (always inject)`}
                  checked={s.pinned}
                  onChange={(v) => props.onState(s, { pinned: v })}
                  testid={`skill-pinned-${s.name}`}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RetrievalBox() {
  const [q, setQ] = useState("");
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState<Retrieval | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const max = useMemo(() => Math.max(0, ...(res?.candidates ?? []).map((c) => c.score ?? 0)), [res]);

  const run = async (e: Event) => {
    e.preventDefault();
    if (!q.trim()) return;
    setBusy(true);
    setErr(null);
    try {
      setRes(await api.retrieval(q.trim()));
    } catch (e) {
      setErr(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title="Try retrieval" class="side" testid="retrieval">
      <p class="muted small">Type a request as your agent would send it: see which skills would be injected, and why.</p>
      <form onSubmit={run} class="stack">
        <label for="retrieval-q" class="sr-only">
          Request text
        </label>
        <textarea
          id="retrieval-q"
          rows={2}
          placeholder="e.g. add a --dry-run flag to my CLI"
          value={q}
          onInput={(e) => setQ((e.currentTarget as HTMLTextAreaElement).value)}
          data-testid="retrieval-query"
        />
        <button type="submit" class="btn btn-primary" disabled={busy || !q.trim()} data-testid="retrieval-run">
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      <ErrorBox message={err} />
      {res && (
        <div class="retrieval-results" data-testid="retrieval-results" aria-live="polite">
          <p class="muted small">
            Mode: <strong>{res.mode}</strong> · {res.candidates.length} candidates
          </p>
          {res.candidates.length === 0 && <p class="muted">No skill scored for this request; nothing would be injected.</p>}
          <ol class="candidates">
            {res.candidates.map((c) => (
              <li key={c.name} class={"candidate" + (c.injected ? " injected" : "")} data-testid={`candidate-${c.name}`}>
                <div class="candidate-head">
                  <a href={href("skills", c.name)} class="strong">
                    {c.name}
                  </a>
                  {c.injected ? <Badge tone="ok">injected</Badge> : <Badge>not injected</Badge>}
                </div>
                <div class="candidate-score">
                  <ScoreBar score={c.score} max={max} />
                  <span class="mono small" data-testid={`candidate-score-${c.name}`}>
                    {num(c.score, 3)}
                  </span>
                </div>
                <div class="muted small">{c.reason}</div>
              </li>
            ))}
          </ol>
        </div>
      )}
    </Card>
  );
}

/** Moves an agent's own skill to the shared folder, for every agent. */
function ShareSkill(props: { name: string; agent: string }) {
  const [busy, setBusy] = useState(false);
  const share = async () => {
    setBusy(true);
    try {
      await api.shareSkill(props.name, props.agent);
      toast(`${props.name} is now shared with all agents`, "ok");
    } catch (e) {
      toast(`Sharing failed: ${errorMessage(e)}`, "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" class="btn-link small" disabled={busy} onClick={() => void share()} data-testid={`share-skill-${props.name}`}>
      Share with all agents
    </button>
  );
}
