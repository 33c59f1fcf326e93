// The settings catalogue as forms: one card per group, one field per setting, each saved on
// its own (a PATCH of that key only). The server validates; its message (the CLI's) shows
// under the field that failed. Secrets are write-only: only whether one is set is shown.
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, errorMessage, type ConfigChange, type ConnectionTest, type SettingField, type SettingsCatalogue, type TinkerProbe } from "../lib/api";
import { toText, toValue } from "../lib/setting-value";
import { Card } from "../components/ui";
import { toast } from "../components/toast";

/** Keys another control of the page edits (mode, the switches, the LLM endpoint form). */
export const SHOWN_ELSEWHERE = new Set(["mode", "rl.enabled", "opd.enabled", "learning_paused", "llm.api_base", "llm.model_id", "llm.api_key"]);

export type FieldErrors = Record<string, string>;

export function SettingsGroups(props: {
  catalogue: SettingsCatalogue;
  errors: FieldErrors;
  setErrors: (fn: (e: FieldErrors) => FieldErrors) => void;
  onSaved: (c: ConfigChange) => void;
  /** Extra content at the top of a group's card (the LLM endpoint form). */
  extra?: Partial<Record<string, preact.ComponentChildren>>;
}) {
  const { catalogue } = props;
  return (
    <>
      {catalogue.groups.map((g) => {
        const fields = catalogue.fields.filter((f) => f.group === g.id && !SHOWN_ELSEWHERE.has(f.key));
        if (!fields.length && !props.extra?.[g.id]) return null;
        return (
          <Card key={g.id} title={g.label} testid={`settings-group-${g.id}`} class="settings-group">
            <div id={`settings-group-${g.id}`} />
            {props.extra?.[g.id]}
            <div class="form">
              {fields.map((f) => (
                <SettingInput key={f.key} field={f} error={props.errors[f.key]} setErrors={props.setErrors} onSaved={props.onSaved} />
              ))}
            </div>
            {g.id === "rl" && <TinkerTest />}
            {g.id === "judge" && <EndpointTest target="judge" label="judge" />}
            {g.id === "teacher" && <EndpointTest target="teacher" label="teacher" />}
          </Card>
        );
      })}
    </>
  );
}

function SettingInput(props: {
  field: SettingField;
  error: string | undefined;
  setErrors: (fn: (e: FieldErrors) => FieldErrors) => void;
  onSaved: (c: ConfigChange) => void;
}) {
  const f = props.field;
  const [text, setText] = useState(toText(f));
  const [busy, setBusy] = useState(false);
  useEffect(() => setText(toText(f)), [JSON.stringify(f.value), f.masked]);
  const dirty = f.kind === "secret" ? text !== "" : text !== toText(f);
  const id = `setting-${f.key.replace(/\./g, "-")}`;

  const save = async (value: unknown) => {
    setBusy(true);
    try {
      const r = await api.setSetting(f.key, value);
      props.setErrors((e) => {
        const { [f.key]: _gone, ...rest } = e;
        return rest;
      });
      props.onSaved(r);
      if (f.kind === "secret") setText("");
      toast(`Saved: ${f.label}`);
    } catch (e) {
      const msg = e instanceof ApiError ? (e.fields.find((x) => x.key === f.key)?.message ?? e.message) : errorMessage(e);
      props.setErrors((errs) => ({ ...errs, [f.key]: msg }));
    } finally {
      setBusy(false);
    }
  };

  const unit = f.unit ? <span class="muted small"> {f.unit}</span> : null;
  let control;
  if (f.kind === "bool") {
    control = (
      <input
        id={id}
        type="checkbox"
        checked={f.value === true}
        disabled={busy}
        onChange={(e) => void save((e.currentTarget as HTMLInputElement).checked)}
        data-testid={`input-${f.key}`}
      />
    );
  } else if (f.kind === "enum") {
    control = (
      <select id={id} value={toText(f)} disabled={busy} onChange={(e) => void save((e.currentTarget as HTMLSelectElement).value)} data-testid={`input-${f.key}`}>
        {(f.options ?? []).map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (f.kind === "list") {
    control = (
      <textarea id={id} rows={3} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} data-testid={`input-${f.key}`} />
    );
  } else {
    const type = f.kind === "secret" ? "password" : "text";
    control = (
      <input
        id={id}
        type={type}
        inputMode={f.kind === "int" ? "numeric" : f.kind === "float" ? "decimal" : undefined}
        autoComplete="off"
        value={text}
        placeholder={f.kind === "secret" ? (f.masked ? `${f.masked} (unchanged)` : "not set") : undefined}
        onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && dirty) void save(toValue(f, text));
        }}
        data-testid={`input-${f.key}`}
      />
    );
  }
  const bounds =
    f.min != null && f.max != null ? ` (${f.min}–${f.max})` : f.min != null && (f.kind === "int" || f.kind === "float") ? ` (≥ ${f.min})` : "";
  return (
    <div class={"field" + (props.error ? " field-invalid" : "")} data-testid={`field-${f.key}`} data-key={f.key}>
      <label for={id}>
        {f.label}
        <span class="muted small mono"> {f.key}</span>
      </label>
      <div class="field-row">
        {control}
        {unit}
        {f.kind !== "bool" && f.kind !== "enum" && dirty && (
          <button type="button" class="btn btn-primary" disabled={busy} onClick={() => void save(toValue(f, text))} data-testid={`save-${f.key}`}>
            Save
          </button>
        )}
      </div>
      <div class="field-hint muted">
        {f.help}
        {bounds}
        {!f.live && " Takes effect after a restart."}
      </div>
      {props.error && (
        <div class="field-error text-error" role="alert" data-testid={`field-error-${f.key}`}>
          {props.error}
        </div>
      )}
    </div>
  );
}

function TinkerTest() {
  const [r, setR] = useState<TinkerProbe | { error: string } | "busy" | null>(null);
  const run = async () => {
    setR("busy");
    try {
      setR(await api.testTinker());
    } catch (e) {
      setR({ error: errorMessage(e) });
    }
  };
  return (
    <div class="tests">
      <button type="button" class="btn" onClick={() => void run()} disabled={r === "busy"} data-testid="test-tinker">
        {r === "busy" ? "Testing…" : "Test Tinker"}
      </button>
      <span class="test-result" aria-live="polite" data-testid="test-result-tinker">
        {r && r !== "busy" && "error" in r && <span class="text-error">{r.error}</span>}
        {r && r !== "busy" && "ok" in r && (
          <span class={r.ok ? "text-ok" : "text-error"}>
            {r.ok ? "✓ OK" : "✗ Failed"} · {Math.round(r.latency_ms)} ms · {r.detail}
            {r.models.length > 0 && <> · models: {r.models.join(", ")}</>}
          </span>
        )}
      </span>
    </div>
  );
}

export function EndpointTest(props: { target: EndpointTarget; label: string }) {
  return (
    <div class="tests">
      <ConnectionTestControls target={props.target} label={props.label} />
    </div>
  );
}

type EndpointTarget = "llm" | "evolver" | "embedding" | "judge" | "teacher";

/** A "Test …" button for one endpoint and the result it got, for a list of tests or on its own. */
export function ConnectionTestControls(props: { target: EndpointTarget; label: string }) {
  const [r, setR] = useState<ConnectionTest | { error: string } | "busy" | null>(null);
  const run = async () => {
    setR("busy");
    try {
      setR(await api.testConnection(props.target));
    } catch (e) {
      setR({ error: errorMessage(e) });
    }
  };
  return (
    <>
      <button type="button" class="btn" onClick={() => void run()} disabled={r === "busy"} data-testid={`test-${props.target}`}>
        {r === "busy" ? "Testing…" : `Test ${props.label}`}
      </button>
      <span class="test-result" aria-live="polite" data-testid={`test-result-${props.target}`}>
        {r && r !== "busy" && "error" in r && <span class="text-error">{r.error}</span>}
        {r && r !== "busy" && "ok" in r && (
          <span class={r.ok ? "text-ok" : "text-error"}>
            {r.ok ? "✓ OK" : "✗ Failed"}
            {r.latency_ms != null ? ` · ${Math.round(r.latency_ms)} ms` : ""}
            {r.detail ? ` · ${r.detail}` : ""}
          </span>
        )}
      </span>
    </>
  );
}
