// The Data group: how big the database is, exporting sessions as JSON Lines, and the shared
// download/delete helpers the session page uses too.
import { useState } from "preact/hooks";
import { api, errorMessage } from "../lib/api";
import { useResource } from "../lib/resource";
import { ErrorBox, KeyValues } from "../components/ui";
import { toast } from "../components/toast";

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** Fetch an export and hand it to the browser as a file download. */
export async function downloadExport(session?: string): Promise<void> {
  const r = await api.exportSessions(session);
  const url = URL.createObjectURL(new Blob([r.jsonl], { type: "application/x-ndjson" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = r.filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
  toast(`Exported ${r.sessions} session${r.sessions === 1 ? "" : "s"}`);
}

export function DataPanel() {
  const data = useResource(() => api.data(), []);
  const [busy, setBusy] = useState(false);
  const d = data.data;
  return (
    <div data-testid="settings-data">
      <ErrorBox message={data.error} />
      {d && (
        <KeyValues
          rows={[
            ["Database", <span data-testid="data-size">{bytes(d.database_bytes)}</span>, d.database_path],
            ["Sessions", <span data-testid="data-sessions">{d.sessions}</span>],
            ["Retention", d.retention_days === 0 ? "kept forever" : `${d.retention_days} days`],
          ]}
        />
      )}
      <div class="form-actions">
        <button
          type="button"
          class="btn"
          disabled={busy}
          data-testid="export-sessions"
          onClick={async () => {
            setBusy(true);
            try {
              await downloadExport();
            } catch (e) {
              toast(`Export failed: ${errorMessage(e)}`, "error");
            } finally {
              setBusy(false);
            }
          }}
        >
          Export all sessions (JSONL)
        </button>
      </div>
      <p class="muted small">Delete a single session from its page (Sessions → a session → Delete).</p>
    </div>
  );
}
