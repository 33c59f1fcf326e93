import { ThumbIcon } from "../components/icons";
import { useState } from "preact/hooks";
import { api, errorMessage, type TurnSummary as Turn } from "../lib/api";
import { useLive } from "../lib/events";
import { apiLabel, dateTime, num, relTime, shortId } from "../lib/format";
import { useResource } from "../lib/resource";
import { href } from "../lib/router";
import { Badge, Card, Empty, ErrorBox, KeyValues, Loading, PageHeader } from "../components/ui";
import { toast } from "../components/toast";
import { downloadExport } from "./SettingsData";

/** Turns per page: a long session has hundreds. */
const PAGE = 200;

export function SessionDetailPage(props: { id: string }) {
  const [page, setPage] = useState(0);
  const detail = useResource(() => api.session(props.id, PAGE, page * PAGE), [props.id, page]);
  useLive(["turn", "session_ended"], (_t, data) => {
    const sid = (data as { session_id?: string } | null)?.session_id;
    if (!sid || sid === props.id) void detail.reload();
  });
  const [distilling, setDistilling] = useState(false);

  const distil = async () => {
    setDistilling(true);
    try {
      const r = await api.distil(props.id);
      if (r.error) toast(`Distillation: ${r.error}`, "error");
      else toast(`Distillation ${r.status}. New proposals go to the inbox.`, "ok", { label: "Open inbox", run: () => (location.hash = href("inbox")) });
    } catch (e) {
      toast(`Distillation failed: ${errorMessage(e)}`, "error");
    } finally {
      setDistilling(false);
    }
  };

  const s = detail.data?.session;
  const turns = detail.data ? [...detail.data.turns].sort((a, b) => a.seq - b.seq) : [];
  return (
    <div class="page" data-testid="page-session">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href("sessions")}>Sessions</a> <span aria-hidden="true">/</span> <span class="mono">{shortId(props.id)}</span>
      </nav>
      <PageHeader
        title={`Session ${shortId(props.id)}`}
        subtitle={s ? <>{s.source} · started {dateTime(s.started_at)}</> : undefined}
        actions={
          <>
            <button type="button" class="btn" onClick={() => void distil()} disabled={distilling} data-testid="distil-session">
              {distilling ? "Distilling…" : "Distil skills from this session"}
            </button>
            <button
              type="button"
              class="btn"
              data-testid="export-session"
              onClick={() => downloadExport(props.id).catch((e) => toast(`Export failed: ${errorMessage(e)}`, "error"))}
            >
              Export
            </button>
            <button
              type="button"
              class="btn btn-danger"
              data-testid="delete-session"
              onClick={async () => {
                if (!confirm("Delete this session with its turns, ratings and training samples?")) return;
                try {
                  await api.deleteSession(props.id);
                  toast("Session deleted");
                  location.hash = href("sessions");
                } catch (e) {
                  toast(`Delete failed: ${errorMessage(e)}`, "error");
                }
              }}
            >
              Delete
            </button>
          </>
        }
      />
      <ErrorBox message={detail.error} />
      {!detail.data && !detail.error && <Loading what="session" />}
      {s && (
        <Card>
          <KeyValues
            rows={[
              ["ID", <span class="mono break">{s.id}</span>],
              ["Turns", s.turn_count],
              ["Last activity", relTime(s.last_seen_at)],
              ["State", s.ended_at ? `ended ${relTime(s.ended_at)}${s.end_reason ? ` (${s.end_reason})` : ""}` : "open"],
            ]}
          />
        </Card>
      )}
      {detail.data && turns.length === 0 && (
        <Empty title="No turns in this session." testid="turns-empty">
          <p>Turns appear here as your agent talks through MetaClaw.</p>
        </Empty>
      )}
      <ol class="turns">
        {turns.map((t) => (
          <TurnCard key={t.id} t={t} onChanged={() => void detail.reload()} />
        ))}
      </ol>
      {s && s.turn_count > PAGE && (
        <div class="pager" data-testid="turns-pager">
          <button type="button" class="btn" disabled={page === 0} onClick={() => setPage(page - 1)} data-testid="turns-earlier">
            Earlier turns
          </button>
          <span class="muted">
            {page * PAGE + 1}–{page * PAGE + turns.length} of {s.turn_count}
          </span>
          <button type="button" class="btn" disabled={(page + 1) * PAGE >= s.turn_count} onClick={() => setPage(page + 1)} data-testid="turns-later">
            Later turns
          </button>
        </div>
      )}
    </div>
  );
}

function TurnCard(props: { t: Turn; onChanged: () => void }) {
  const { t } = props;
  const [note, setNote] = useState("");
  const [noteOpen, setNoteOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [local, setLocal] = useState<{ rating: number; note?: string | null } | null>(null);
  const fb = local ?? t.feedback;
  const rating = fb?.rating ?? 0;

  const send = async (r: 1 | -1) => {
    setBusy(true);
    try {
      await api.feedback(t.id, r, note.trim() || undefined);
      setLocal({ rating: r, note: note.trim() || fb?.note || null });
      setNoteOpen(false);
      toast(r > 0 ? "Marked as helpful" : "Marked as unhelpful");
      props.onChanged();
    } catch (e) {
      toast(`Feedback failed: ${errorMessage(e)}`, "error");
    } finally {
      setBusy(false);
    }
  };

  const tone = t.status === "ok" ? "ok" : t.status === "client_aborted" ? "warn" : "error";
  const idp = `turn-${t.id}`;
  return (
    <li class="turn card" data-testid={`turn-${t.id}`} data-rating={rating} aria-labelledby={idp + "-title"}>
      <header class="turn-head">
        <h2 class="card-title" id={idp + "-title"}>
          Turn {t.seq}
        </h2>
        <Badge tone={tone} testid={`turn-status-${t.id}`}>
          {t.status}
        </Badge>
        {t.turn_type && t.turn_type !== "main" && <Badge>{t.turn_type}</Badge>}
        <span class="muted small">
          {t.model} · {apiLabel(t.api)} · {t.latency_ms != null ? `${num(t.latency_ms, 0)} ms · ` : ""}
          <time dateTime={t.started_at} title={dateTime(t.started_at)}>
            {relTime(t.started_at)}
          </time>
          {t.skill_generation != null && <> · skills gen {t.skill_generation}</>}
        </span>
        {rating !== 0 && (
          <span class={"feedback-mark " + (rating > 0 ? "up" : "down")} data-testid={`turn-feedback-${t.id}`}>
            <ThumbIcon size={14} down={rating < 0} /> {rating > 0 ? "helpful" : "unhelpful"}
            {fb?.note ? ` — “${fb.note}”` : ""}
          </span>
        )}
      </header>
      {t.error && <p class="text-error small">{t.error}</p>}
      {t.reward && <RewardLine t={t} />}
      <div class="messages">
        <Message role="User" text={t.user_text} />
        <Message role="Assistant" text={t.assistant_text} />
      </div>
      <div class="turn-foot">
        <div class="injected" data-testid={`turn-injected-${t.id}`}>
          <span class="muted small">Injected skills:</span>{" "}
          {t.injected?.length ? (
            t.injected.map((i) => (
              <a key={i.name} href={href("skills", i.name)} class="chip chip-link" title={i.version != null ? `version ${i.version}` : undefined}>
                {i.name}
                {i.score != null && <span class="chip-score"> {num(i.score, 2)}</span>}
              </a>
            ))
          ) : (
            <span class="muted small">none</span>
          )}
        </div>
        <div class="thumbs" role="group" aria-label={`Feedback on turn ${t.seq}`}>
          <button type="button" class={"btn btn-icon-text" + (rating > 0 ? " pressed-up" : "")} aria-pressed={rating > 0} disabled={busy} onClick={() => void send(1)} data-testid={`thumb-up-${t.id}`}>
            <ThumbIcon /> Helpful
          </button>
          <button type="button" class={"btn btn-icon-text" + (rating < 0 ? " pressed-down" : "")} aria-pressed={rating < 0} disabled={busy} onClick={() => void send(-1)} data-testid={`thumb-down-${t.id}`}>
            <ThumbIcon down /> Unhelpful
          </button>
          <button type="button" class="btn-link small" aria-expanded={noteOpen} onClick={() => setNoteOpen(!noteOpen)} data-testid={`note-toggle-${t.id}`}>
            {noteOpen ? "No note" : "Add a note"}
          </button>
        </div>
      </div>
      {noteOpen && (
        <div class="field">
          <label for={idp + "-note"}>Note (sent with your next Helpful or Unhelpful)</label>
          <input id={idp + "-note"} type="text" value={note} onInput={(e) => setNote((e.currentTarget as HTMLInputElement).value)} data-testid={`note-${t.id}`} placeholder="What was good or wrong?" />
        </div>
      )}
    </li>
  );
}

/** What each part of the RL reward is called on the page. */
const PART_LABEL: Record<string, string> = {
  judge: "judge",
  thumbs: "thumbs",
  correction: "corrected next turn",
  retry: "asked again",
  tool_error: "tool error",
};

/** The turn's RL reward and the parts it is the sum of (signal × weight from Settings). */
function RewardLine(props: { t: Turn }) {
  const r = props.t.reward;
  if (!r) return null;
  const signed = (v: number) => (v > 0 ? "+" : v < 0 ? "−" : "") + num(Math.abs(v), 2);
  return (
    <p class="reward-line small" data-testid={`turn-reward-${props.t.id}`}>
      <span class="muted">RL reward</span> <strong data-testid={`turn-reward-value-${props.t.id}`}>{signed(r.value)}</strong>{" "}
      <span class="muted">({r.source})</span>
      {r.parts.length > 0 && <span class="muted"> = </span>}
      {r.parts.map((p) => (
        <span
          key={p.component}
          class="chip"
          data-testid={`turn-reward-part-${props.t.id}-${p.component}`}
          title={`signal ${p.signal} × weight ${p.weight}`}
        >
          {PART_LABEL[p.component] ?? p.component} {signed(p.value)}
        </span>
      ))}
    </p>
  );
}

function Message(props: { role: string; text: string | null }) {
  const [open, setOpen] = useState(false);
  const text = props.text ?? "";
  const long = text.length > 700;
  return (
    <div class={"message message-" + props.role.toLowerCase()}>
      <div class="message-role">{props.role}</div>
      {text ? (
        <>
          <div class="message-text">{long && !open ? text.slice(0, 700) + "…" : text}</div>
          {long && (
            <button type="button" class="btn-link small" aria-expanded={open} onClick={() => setOpen(!open)}>
              {open ? "Show less" : `Show all (${text.length.toLocaleString()} characters)`}
            </button>
          )}
        </>
      ) : (
        <div class="muted small">(no text)</div>
      )}
    </div>
  );
}
