import { ThumbIcon } from "../components/icons";
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, errorMessage, type SkillDetail, type SkillVersionRow as VersionRow } from "../lib/api";
import { useLive } from "../lib/events";
import { dateTime, relTime, shortVersion } from "../lib/format";
import { frontmatterFields, frontmatterHints, splitFrontmatter } from "../lib/markdown";
import { useResource } from "../lib/resource";
import { href, navigate } from "../lib/router";
import { Badge, Card, Empty, ErrorBox, Loading, Markdown, Notice, PageHeader, Switch } from "../components/ui";
import { toast } from "../components/toast";

const TEMPLATE = `---
name: my-new-skill
description: "Use when … (say when this skill applies, so retrieval can find it)."
category: general
---

# My New Skill

## Steps

1. **Do the first thing.** Why it matters.
2. **Then the next.**

## Anti-patterns

- What to avoid.
`;

export function SkillDetailPage(props: { name: string | null }) {
  const isNew = props.name === null;
  const detail = useResource<SkillDetail | null>(() => (props.name ? api.skill(props.name) : Promise.resolve(null)), [props.name]);
  const history = useResource<VersionRow[]>(() => (props.name ? api.history(props.name) : Promise.resolve([])), [props.name]);
  const [text, setText] = useState<string>(isNew ? TEMPLATE : "");
  const [base, setBase] = useState<string>(isNew ? "" : "");
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [changedElsewhere, setChangedElsewhere] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const dirty = text !== base;

  // Load the content into the editor when it arrives (and after our own saves).
  const loaded = detail.data?.content;
  useEffect(() => {
    if (loaded !== undefined) {
      setText(loaded);
      setBase(loaded);
      setChangedElsewhere(false);
    }
  }, [loaded]);

  useLive(["skill_changed"], (_t, data) => {
    const name = (data as { name?: string; skill_name?: string } | null)?.name ?? (data as { skill_name?: string } | null)?.skill_name;
    if (name && props.name && name !== props.name) return;
    void history.reload();
    if (dirty) setChangedElsewhere(true);
    else void detail.reload();
  });

  const hints = useMemo(() => frontmatterHints(text, props.name ?? undefined), [text, props.name]);
  const split = useMemo(() => splitFrontmatter(text), [text]);
  const fields = useMemo(() => (split.frontmatter ? frontmatterFields(split.frontmatter) : {}), [split.frontmatter]);

  const save = async () => {
    setSaving(true);
    setSaveError(null);
    try {
      if (isNew) {
        const row = await api.createSkill(text);
        const name = row?.skill_name || fields.name;
        toast(`Created ${name}`);
        navigate("skills", name);
        return;
      }
      const row = await api.saveSkill(props.name!, text);
      toast(`Saved ${props.name} as version ${row?.version ?? "?"}`);
      await Promise.all([detail.reload(), history.reload()]);
    } catch (e) {
      setSaveError(errorMessage(e));
    } finally {
      setSaving(false);
    }
  };

  const rollback = async (v: VersionRow) => {
    try {
      const row = await api.rollback(props.name!, v.version);
      toast(`Restored version ${v.version} of ${props.name}${row?.version ? ` (now version ${row.version})` : ""}`);
      setSaveError(null);
      await Promise.all([detail.reload(), history.reload()]);
    } catch (e) {
      toast(`Rollback failed: ${errorMessage(e)}`, "error");
    }
  };

  const remove = async () => {
    try {
      await api.deleteSkill(props.name!);
      toast(`Deleted your copy of ${props.name}`);
      navigate("skills");
    } catch (e) {
      toast(`Delete failed: ${errorMessage(e)}`, "error");
    }
  };

  const setState = async (patch: { enabled?: boolean; pinned?: boolean }) => {
    const before = detail.data;
    if (before) detail.set({ ...before, skill: { ...before.skill, ...patch } });
    try {
      await api.skillState(props.name!, patch);
    } catch (e) {
      if (before) detail.set(before);
      toast(errorMessage(e), "error");
    }
  };

  if (!isNew && detail.error && !detail.data) {
    return (
      <div class="page" data-testid="page-skill">
        <PageHeader title={props.name!} />
        <ErrorBox message={detail.error} />
        <p>
          <a href={href("skills")}>Back to all skills</a>
        </p>
      </div>
    );
  }
  if (!isNew && !detail.data) {
    return (
      <div class="page" data-testid="page-skill">
        <PageHeader title={props.name!} />
        <Loading what="skill" />
      </div>
    );
  }
  const skill = detail.data?.skill;

  return (
    <div class="page" data-testid="page-skill">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href("skills")}>Skills</a> <span aria-hidden="true">/</span> <span>{props.name ?? "new"}</span>
      </nav>
      <PageHeader
        title={isNew ? "New skill" : props.name!}
        subtitle={skill ? skill.description : "Write a SKILL.md: YAML frontmatter (name, description, category) and a Markdown body."}
        actions={
          skill && (
            <div class="chips">
              <Badge tone={skill.source === "user" ? "accent" : "neutral"}>{skill.source === "user" ? "yours" : "bundled"}</Badge>
              <Badge testid="skill-version" title={String(skill.version)}>version {shortVersion(skill.version)}</Badge>
              {skill.category && <Badge>{skill.category}</Badge>}
            </div>
          )
        }
      />
      {skill && (
        <div class="toolbar">
          <Switch label="Enabled" checked={skill.enabled} onChange={(v) => setState({ enabled: v })} testid="detail-enabled" />
          <Switch label="Pinned (always injected)" checked={skill.pinned} onChange={(v) => setState({ pinned: v })} testid="detail-pinned" />
          <span class="muted small">
            Injected into {skill.injected} turns · <ThumbIcon size={13} /> {skill.thumbs_up} <span class="sr-only">helpful</span> ·{" "}
            <ThumbIcon size={13} down /> {skill.thumbs_down} <span class="sr-only">unhelpful</span>
          </span>
          <span class="muted small mono break" title="File">
            {skill.path}
          </span>
        </div>
      )}
      {detail.data && detail.data.problems?.length > 0 && (
        <div class="notice notice-warn" role="status" data-testid="skill-problems">
          <strong>Lint:</strong>
          <ul>
            {detail.data.problems.map((p, i) => (
              <li key={i}>
                <Badge tone={p.level === "error" ? "error" : "warn"}>{p.level}</Badge> {p.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {changedElsewhere && (
        <Notice tone="warn" testid="changed-elsewhere">
          This skill changed while you were editing.{" "}
          <button type="button" class="btn btn-small" onClick={() => void detail.reload()}>
            Load the new version
          </button>{" "}
          (your edits will be replaced)
        </Notice>
      )}

      <Card
        title="SKILL.md"
        testid="skill-editor"
        actions={
          <>
            {dirty && <span class="muted small" data-testid="dirty">Unsaved changes</span>}
            {!isNew && (
              <button type="button" class="btn" disabled={!dirty || saving} onClick={() => setText(base)} data-testid="skill-revert">
                Discard changes
              </button>
            )}
            <button type="button" class="btn btn-primary" disabled={saving || (!isNew && !dirty)} onClick={() => void save()} data-testid="skill-save">
              {saving ? "Saving…" : isNew ? "Create skill" : "Save"}
            </button>
          </>
        }
      >
        <ErrorBox message={saveError} testid="skill-save-error" title="Not saved:" />
        {hints.length > 0 && (
          <div class="notice notice-warn small" role="status" data-testid="skill-hints">
            {hints.map((h, i) => (
              <div key={i}>{h}</div>
            ))}
          </div>
        )}
        <div class="editor">
          <div class="editor-pane">
            <label for="skill-content" class="pane-label">
              Markdown <span class="muted small">(Ctrl+S saves)</span>
            </label>
            <textarea
              id="skill-content"
              class="code-input"
              spellcheck={false}
              value={text}
              onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
              onKeyDown={(e) => {
                if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
                  e.preventDefault();
                  if (isNew || dirty) void save();
                }
              }}
              data-testid="skill-content"
            />
          </div>
          <div class="editor-pane">
            <div class="pane-label" id="preview-label">
              Preview
            </div>
            <div class="preview" aria-labelledby="preview-label" data-testid="skill-preview" tabIndex={0}>
              {split.frontmatter !== null && (
                <table class="frontmatter" aria-label="Frontmatter">
                  <tbody>
                    {Object.entries(fields).map(([k, v]) => (
                      <tr key={k}>
                        <th scope="row">{k}</th>
                        <td>{v || <span class="muted">(nested)</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <Markdown source={split.body} />
            </div>
          </div>
        </div>
      </Card>

      {!isNew && (
        <Card title="History" testid="skill-history">
          <ErrorBox message={history.error} />
          {!history.data && !history.error && <Loading what="history" />}
          {history.data && history.data.length === 0 && (
            <Empty title="No versions recorded yet." testid="history-empty">
              <p>Every edit, approval and rollback from now on is recorded here and can be restored.</p>
            </Empty>
          )}
          {history.data && history.data.length > 0 && <History rows={history.data} current={base} onRollback={rollback} />}
        </Card>
      )}

      {!isNew && skill?.source === "user" && (
        <Card title="Danger zone" testid="skill-danger">
          {!confirmDelete ? (
            <button type="button" class="btn btn-danger" onClick={() => setConfirmDelete(true)} data-testid="skill-delete">
              Delete my copy…
            </button>
          ) : (
            <div class="toolbar" role="group" aria-label="Confirm delete">
              <span>Delete your copy of {props.name}? A bundled skill of the same name comes back; the history keeps this version.</span>
              <button type="button" class="btn btn-danger" onClick={() => void remove()} data-testid="skill-delete-confirm">
                Delete
              </button>
              <button type="button" class="btn" onClick={() => setConfirmDelete(false)}>
                Cancel
              </button>
            </div>
          )}
        </Card>
      )}
    </div>
  );
}

function History(props: { rows: VersionRow[]; current: string; onRollback: (v: VersionRow) => void }) {
  const rows = [...props.rows].sort((a, b) => b.version - a.version);
  const newest = rows[0]?.version;
  return (
    <ol class="history">
      {rows.map((v) => {
        const isCurrent = v.version === newest;
        return (
          <li key={v.version} class="history-row" data-testid={`history-row-${v.version}`}>
            <div class="history-head">
              <strong>v{v.version}</strong>
              <Badge tone={v.action === "rollback" ? "warn" : v.action === "delete" ? "error" : v.author === "evolver" ? "info" : "neutral"}>{v.action}</Badge>
              <span class="muted small">
                by {v.author} · <time dateTime={v.created_at} title={dateTime(v.created_at)}>{relTime(v.created_at)}</time>
                {v.proposal_id != null && <> · proposal #{v.proposal_id}</>}
                {v.generation != null && <> · generation {v.generation}</>}
              </span>
              {isCurrent ? (
                <Badge tone="ok">current</Badge>
              ) : !v.content ? (
                <span class="muted small" data-testid={`history-empty-${v.version}`}>
                  (no text: before the skill existed, or deleted)
                </span>
              ) : (
                <button
                  type="button"
                  class="btn btn-small"
                  onClick={() => props.onRollback(v)}
                  data-testid={`rollback-${v.version}`}
                  aria-label={`Restore version ${v.version}`}
                  disabled={v.content === props.current && v.action !== "delete"}
                  title={v.content === props.current ? "Same text as now" : undefined}
                >
                  Restore
                </button>
              )}
            </div>
            {v.content && (
              <details>
                <summary>Show text</summary>
                <pre class="code small">{v.content}</pre>
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}
