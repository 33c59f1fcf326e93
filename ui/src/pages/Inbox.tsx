import { useState } from "preact/hooks";
import { api, errorMessage, type ProposalRow as Proposal } from "../lib/api";
import { useAgent } from "../lib/agent";
import { useLive } from "../lib/events";
import { dateTime, relTime, shortId } from "../lib/format";
import { useResource } from "../lib/resource";
import { href } from "../lib/router";
import { Badge, Card, DiffView, Empty, ErrorBox, Kbd, Loading, PageHeader } from "../components/ui";
import { toast } from "../components/toast";

type Tab = "pending" | "decided";

export function InboxPage() {
  const [tab, setTab] = useState<Tab>("pending");
  const agent = useAgent();
  const pending = useResource(() => api.proposals("pending", undefined, undefined, agent), [agent]);
  const decided = useResource(
    () => (tab === "decided" ? api.proposals(undefined, undefined, undefined, agent) : Promise.resolve([] as Proposal[])),
    [tab, agent],
  );
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [bulkReason, setBulkReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [distilling, setDistilling] = useState(false);

  const reload = () => {
    void pending.reload();
    if (tab === "decided") void decided.reload();
  };
  useLive(["proposals", "skill_changed"], reload);

  const items = pending.data ?? [];
  const allSelected = items.length > 0 && items.every((p) => selected.has(p.id));
  const toggle = (id: number, on: boolean) =>
    setSelected((prev) => {
      const n = new Set(prev);
      if (on) n.add(id);
      else n.delete(id);
      return n;
    });

  const afterDecision = (ids: number[]) => {
    setSelected((prev) => {
      const n = new Set(prev);
      ids.forEach((i) => n.delete(i));
      return n;
    });
    reload();
  };

  const undo = async (p: Proposal) => {
    try {
      await api.undo(p.id);
      toast(`Undid ${p.skill_name}`);
      reload();
    } catch (e) {
      toast(`Undo failed: ${errorMessage(e)}`, "error");
    }
  };

  const bulk = async (action: "approve" | "reject") => {
    const ids = items.filter((p) => selected.has(p.id)).map((p) => p.id);
    if (!ids.length) return;
    setBusy(true);
    try {
      const r = await api.bulk(action, ids, action === "reject" ? bulkReason.trim() || undefined : undefined);
      const ok = r.results.filter((x) => x.ok).length;
      const failed = r.results.filter((x) => !x.ok);
      toast(`${action === "approve" ? "Approved" : "Rejected"} ${ok} of ${ids.length}`, failed.length ? "error" : "ok");
      for (const f of failed) toast(`#${f.id}: ${f.error ?? "failed"}`, "error");
      setBulkReason("");
      afterDecision(r.results.filter((x) => x.ok).map((x) => x.id));
    } catch (e) {
      toast(`Bulk ${action} failed: ${errorMessage(e)}`, "error");
    } finally {
      setBusy(false);
    }
  };

  const distil = async () => {
    setDistilling(true);
    try {
      const r = await api.distil();
      if (r.error) toast(`Distillation: ${r.error}`, "error");
      else {
        const n = Array.isArray(r.proposals) ? r.proposals.length : typeof r.proposals === "number" ? r.proposals : 0;
        toast(`Distilled ${r.session_id ? "session " + shortId(r.session_id) : "the latest session"}: ${r.status}${n ? `, ${n} new proposal(s)` : ""}`);
      }
      reload();
    } catch (e) {
      toast(`Distillation failed: ${errorMessage(e)}`, "error");
    } finally {
      setDistilling(false);
    }
  };

  return (
    <div class="page" data-testid="page-inbox">
      <PageHeader
        title="Inbox"
        subtitle="Skills MetaClaw distilled from your sessions. Nothing reaches your agent until you approve it."
        actions={
          <button type="button" class="btn" onClick={() => void distil()} disabled={distilling} data-testid="distil-now">
            {distilling ? "Distilling…" : "Distil latest session"}
          </button>
        }
      />
      <div class="tabs" role="group" aria-label="Show proposals">
        <button type="button" aria-pressed={tab === "pending"} class={"tab" + (tab === "pending" ? " active" : "")} onClick={() => setTab("pending")} data-testid="tab-pending">
          Pending{pending.data ? ` (${pending.data.length})` : ""}
        </button>
        <button type="button" aria-pressed={tab === "decided"} class={"tab" + (tab === "decided" ? " active" : "")} onClick={() => setTab("decided")} data-testid="tab-decided">
          Decided
        </button>
      </div>

      {tab === "pending" && (
        <>
          <ErrorBox message={pending.error} />
          {!pending.data && !pending.error && <Loading what="proposals" />}
          {pending.data && items.length === 0 && (
            <Empty title="Nothing to review." testid="inbox-empty">
              <p>
                MetaClaw proposes skills after a session ends (when <Kbd>skills.auto_evolve</Kbd> is on). You can also distil the latest session now
                with the button above, or run <Kbd>metaclaw skills distil</Kbd>.
              </p>
            </Empty>
          )}
          {items.length > 0 && (
            <div class="bulkbar card" role="group" aria-label="Bulk actions" data-testid="bulkbar">
              <label class="check">
                <input
                  type="checkbox"
                  checked={allSelected}
                  onChange={(e) => setSelected((e.currentTarget as HTMLInputElement).checked ? new Set(items.map((p) => p.id)) : new Set())}
                  data-testid="select-all"
                />
                Select all
              </label>
              <span class="muted small">{selected.size} selected</span>
              <button type="button" class="btn btn-primary" disabled={!selected.size || busy} onClick={() => void bulk("approve")} data-testid="bulk-approve">
                Approve selected
              </button>
              <label for="bulk-reason" class="sr-only">
                Reason for rejecting the selected proposals
              </label>
              <input
                id="bulk-reason"
                type="text"
                placeholder="Reason (optional)"
                value={bulkReason}
                onInput={(e) => setBulkReason((e.currentTarget as HTMLInputElement).value)}
                data-testid="bulk-reason"
              />
              <button type="button" class="btn btn-danger" disabled={!selected.size || busy} onClick={() => void bulk("reject")} data-testid="bulk-reject">
                Reject selected
              </button>
            </div>
          )}
          <div class="stack">
            {items.map((p) => (
              <ProposalCard key={p.id} p={p} selected={selected.has(p.id)} onSelect={(v) => toggle(p.id, v)} onDone={() => afterDecision([p.id])} onUndo={undo} />
            ))}
          </div>
        </>
      )}

      {tab === "decided" && (
        <>
          <ErrorBox message={decided.error} />
          {!decided.data && !decided.error && <Loading what="decisions" />}
          {decided.data && <Decided rows={decided.data.filter((p) => p.status !== "pending")} onUndo={undo} onShared={reload} />}
        </>
      )}
    </div>
  );
}

function ProposalCard(props: { p: Proposal; selected: boolean; onSelect: (v: boolean) => void; onDone: () => void; onUndo: (p: Proposal) => void }) {
  const { p } = props;
  const [mode, setMode] = useState<"view" | "edit" | "reject">("view");
  const [edited, setEdited] = useState(p.content);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const [showFull, setShowFull] = useState(false);
  const idp = `proposal-${p.id}`;

  const approve = async (content?: string) => {
    setBusy(true);
    setErr(null);
    try {
      const row = await api.approve(p.id, content);
      toast(`Approved ${p.skill_name}${row?.version ? ` → version ${row.version}` : ""}`, "ok", { label: "Undo", run: () => props.onUndo(p) });
      props.onDone();
    } catch (e) {
      setErr(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const reject = async () => {
    setBusy(true);
    setErr(null);
    try {
      await api.reject(p.id, reason.trim() || undefined);
      toast(`Rejected ${p.skill_name}`);
      props.onDone();
    } catch (e) {
      setErr(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class={"card proposal" + (props.selected ? " selected" : "")} data-testid={`proposal-${p.skill_name}`} data-proposal-id={p.id} aria-labelledby={idp + "-title"}>
      <header class="proposal-head">
        <label class="check">
          <input type="checkbox" checked={props.selected} onChange={(e) => props.onSelect((e.currentTarget as HTMLInputElement).checked)} data-testid={`select-${p.skill_name}`} />
          <span class="sr-only">Select {p.skill_name}</span>
        </label>
        <h2 class="card-title" id={idp + "-title"}>
          {p.kind === "update" ? (
            <a href={href("skills", p.skill_name)}>{p.skill_name}</a>
          ) : (
            p.skill_name
          )}
        </h2>
        <Badge tone={p.kind === "new" ? "accent" : "info"}>{p.kind === "new" ? "new skill" : "update"}</Badge>
        {p.agent && <Badge tone="info">for {p.agent} only</Badge>}
        <span class="muted small">
          #{p.id} · <time dateTime={p.created_at} title={dateTime(p.created_at)}>{relTime(p.created_at)}</time>
        </span>
      </header>

      <p class="proposal-reason">{p.reason || <span class="muted">No reason given.</span>}</p>
      <Provenance p={p} />

      {mode === "edit" ? (
        <div class="stack">
          <label for={idp + "-edit"}>Edit the SKILL.md before approving</label>
          <textarea
            id={idp + "-edit"}
            class="code-input"
            rows={16}
            spellcheck={false}
            value={edited}
            onInput={(e) => setEdited((e.currentTarget as HTMLTextAreaElement).value)}
            data-testid={`edit-content-${p.skill_name}`}
          />
        </div>
      ) : p.kind === "update" && p.diff && !showFull ? (
        <DiffView diff={p.diff} testid={`diff-${p.skill_name}`} />
      ) : (
        <pre class="code proposal-content" tabIndex={0} data-testid={`content-${p.skill_name}`}>
          {p.content}
        </pre>
      )}
      {mode !== "edit" && p.kind === "update" && p.diff && (
        <button type="button" class="btn-link small" onClick={() => setShowFull(!showFull)}>
          {showFull ? "Show the diff" : "Show the full new text"}
        </button>
      )}

      <ErrorBox message={err} testid={`proposal-error-${p.skill_name}`} />

      {mode === "reject" && (
        <div class="field">
          <label for={idp + "-reason"}>Why reject? (optional, helps the evolver)</label>
          <input
            id={idp + "-reason"}
            type="text"
            value={reason}
            onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
            data-testid={`reject-reason-${p.skill_name}`}
          />
        </div>
      )}

      <div class="proposal-actions">
        {mode === "view" && (
          <>
            <button type="button" class="btn btn-primary" disabled={busy} onClick={() => void approve()} data-testid={`approve-${p.skill_name}`}>
              Approve
            </button>
            <button type="button" class="btn" disabled={busy} onClick={() => { setEdited(p.content); setMode("edit"); }} data-testid={`edit-${p.skill_name}`}>
              Edit, then approve
            </button>
            <button type="button" class="btn btn-danger-outline" disabled={busy} onClick={() => setMode("reject")} data-testid={`reject-${p.skill_name}`}>
              Reject…
            </button>
            {p.agent && <ShareButton p={p} onShared={props.onDone} />}
          </>
        )}
        {mode === "edit" && (
          <>
            <button type="button" class="btn btn-primary" disabled={busy} onClick={() => void approve(edited)} data-testid={`approve-edited-${p.skill_name}`}>
              Approve edited version
            </button>
            <button type="button" class="btn" disabled={busy} onClick={() => setMode("view")}>
              Cancel
            </button>
          </>
        )}
        {mode === "reject" && (
          <>
            <button type="button" class="btn btn-danger" disabled={busy} onClick={() => void reject()} data-testid={`reject-confirm-${p.skill_name}`}>
              Reject
            </button>
            <button type="button" class="btn" disabled={busy} onClick={() => setMode("view")}>
              Cancel
            </button>
          </>
        )}
      </div>
    </article>
  );
}

function Provenance({ p }: { p: Proposal }) {
  return (
    <dl class="provenance" data-testid={`provenance-${p.skill_name}`}>
      <div>
        <dt>Session</dt>
        <dd>{p.session_id ? <a href={href("sessions", p.session_id)}>{shortId(p.session_id)}</a> : "—"}</dd>
      </div>
      <div>
        <dt>Turns</dt>
        <dd>{p.turn_ids?.length ? p.turn_ids.map((t) => <code key={t} class="chip">{shortId(String(t))}</code>) : "—"}</dd>
      </div>
      <div>
        <dt>Signals</dt>
        <dd>
          <Signals signals={p.signals} />
        </dd>
      </div>
      <div>
        <dt>Evolver</dt>
        <dd class="mono">{p.evolver_model || "—"}</dd>
      </div>
    </dl>
  );
}

/** Signals are free-form JSON from the evolver pipeline: show them as chips. */
function Signals({ signals }: { signals: unknown }) {
  if (signals === null || signals === undefined) return <>—</>;
  const chips: string[] = [];
  const add = (v: unknown, prefix = "") => {
    if (v === null || v === undefined || v === false) return;
    if (Array.isArray(v)) v.forEach((x) => add(x, prefix));
    else if (typeof v === "object") {
      const o = v as Record<string, unknown>;
      if (typeof o.kind === "string" || typeof o.type === "string") {
        chips.push(String(o.kind ?? o.type) + (o.turn_id || o.turn ? ` @${shortId(String(o.turn_id ?? o.turn))}` : ""));
      } else for (const [k, x] of Object.entries(o)) {
        if (typeof x === "object" && x !== null) add(x, k + ": ");
        else if (x === true) chips.push(prefix + k);
        else if (x !== false && x !== 0 && x !== null) chips.push(`${prefix}${k}: ${x}`);
      }
    } else chips.push(prefix + String(v));
  };
  add(signals);
  if (!chips.length) return <>—</>;
  return (
    <>
      {chips.slice(0, 12).map((c, i) => (
        <span key={i} class="chip">
          {c}
        </span>
      ))}
      {chips.length > 12 && <span class="muted small"> +{chips.length - 12} more</span>}
    </>
  );
}

/** "Share with all agents": the proposal's skill goes to the shared folder instead of its agent's. */
function ShareButton(props: { p: Proposal; onShared: () => void }) {
  const [busy, setBusy] = useState(false);
  const share = async () => {
    setBusy(true);
    try {
      await api.shareProposal(props.p.id);
      toast(`${props.p.skill_name} is shared with all agents`, "ok");
      props.onShared();
    } catch (e) {
      toast(`Sharing failed: ${errorMessage(e)}`, "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" class="btn" disabled={busy} onClick={() => void share()} data-testid={`share-${props.p.skill_name}`}>
      Share with all agents
    </button>
  );
}

function Decided(props: { rows: Proposal[]; onUndo: (p: Proposal) => void; onShared: () => void }) {
  if (!props.rows.length) {
    return (
      <Empty title="No decisions yet." testid="decided-empty">
        <p>Approved and rejected proposals show up here, with an undo for approvals.</p>
      </Empty>
    );
  }
  const rows = [...props.rows].sort((a, b) => (b.decided_at ?? b.created_at).localeCompare(a.decided_at ?? a.created_at));
  return (
    <Card>
      <div class="table-wrap">
        <table class="table" data-testid="decided-table">
          <thead>
            <tr>
              <th scope="col">Skill</th>
              <th scope="col">Kind</th>
              <th scope="col">Decision</th>
              <th scope="col">When</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.id} data-testid={`decided-${p.skill_name}`}>
                <td>
                  <a href={href("skills", p.skill_name)}>{p.skill_name}</a>
                </td>
                <td>{p.kind}</td>
                <td>
                  <Badge tone={p.status === "approved" ? "ok" : p.status === "rejected" ? "error" : "neutral"}>{p.status}</Badge>
                  {p.reject_reason && <span class="muted small"> {p.reject_reason}</span>}
                </td>
                <td>{relTime(p.decided_at ?? p.created_at)}</td>
                <td>
                  {p.status === "approved" && (
                    <button type="button" class="btn btn-small" onClick={() => props.onUndo(p)} data-testid={`undo-${p.skill_name}`}>
                      Undo
                    </button>
                  )}
                  {p.status === "approved" && p.agent && <ShareButton p={p} onShared={props.onShared} />}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Card>
  );
}
