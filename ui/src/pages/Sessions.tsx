import { useState } from "preact/hooks";
import { api } from "../lib/api";
import { useLive } from "../lib/events";
import { dateTime, relTime, shortId } from "../lib/format";
import { useResource } from "../lib/resource";
import { useAgent } from "../lib/agent";
import { href } from "../lib/router";
import { Badge, Card, Empty, ErrorBox, Loading, PageHeader } from "../components/ui";

/** Sessions per page: a year of use has tens of thousands. */
const PAGE = 100;

export function SessionsPage() {
  const [page, setPage] = useState(0);
  const agent = useAgent();
  const list = useResource(() => api.sessions(PAGE, page * PAGE, agent), [page, agent]);
  useLive(["turn", "session_started", "session_ended"], () => void list.reload());
  return (
    <div class="page" data-testid="page-sessions">
      <PageHeader title="Sessions" subtitle="Conversations your agent had through MetaClaw, newest first." />
      <ErrorBox message={list.error} />
      {!list.data && !list.error && <Loading what="sessions" />}
      {list.data && list.data.length === 0 && (
        <Empty title="No sessions yet." testid="sessions-empty">
          <p>
            Point your agent at this daemon's <code>/v1</code> endpoint and talk to it: every turn is recorded here. The address and key are in{" "}
            <a href={href("settings")}>Settings</a>.
          </p>
        </Empty>
      )}
      {list.data && list.data.length > 0 && (
        <Card>
          <div class="table-wrap">
            <table class="table" data-testid="sessions-table">
              <thead>
                <tr>
                  <th scope="col">Session</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Source</th>
                  <th scope="col">Started</th>
                  <th scope="col">Last activity</th>
                  <th scope="col" class="num">
                    Turns
                  </th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((s) => (
                  <tr key={s.id} data-testid={`session-row-${s.id}`}>
                    <td>
                      <a href={href("sessions", s.id)} class="mono strong" data-testid={`session-link-${s.id}`} title={s.id}>
                        {shortId(s.id)}
                      </a>
                    </td>
                    <td data-testid={`session-agent-${s.id}`}>{s.agent}</td>
                    <td>{s.source}</td>
                    <td>
                      <time dateTime={s.started_at} title={dateTime(s.started_at)}>
                        {relTime(s.started_at)}
                      </time>
                    </td>
                    <td>
                      <time dateTime={s.last_seen_at} title={dateTime(s.last_seen_at)}>
                        {relTime(s.last_seen_at)}
                      </time>
                    </td>
                    <td class="num">{s.turn_count}</td>
                    <td>{s.ended_at ? <Badge>ended{s.end_reason ? ` · ${s.end_reason}` : ""}</Badge> : <Badge tone="ok">open</Badge>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {(page > 0 || list.data.length === PAGE) && (
            <div class="pager" data-testid="sessions-pager">
              <button type="button" class="btn" disabled={page === 0} onClick={() => setPage(page - 1)} data-testid="sessions-newer">
                Newer
              </button>
              <span class="muted">
                {page * PAGE + 1}–{page * PAGE + list.data.length}
              </span>
              <button type="button" class="btn" disabled={list.data.length < PAGE} onClick={() => setPage(page + 1)} data-testid="sessions-older">
                Older
              </button>
            </div>
          )}
        </Card>
      )}
    </div>
  );
}
