import { useEffect, useState } from "preact/hooks";
import { useStatus } from "../App";
import { ApiError, api, errorMessage, type ConfigChange, type ConfigPatch, type LlmConfig, type Mode, type Status } from "../lib/api";
import { useResource } from "../lib/resource";
import { Card, ErrorBox, Kbd, Loading, Notice, PageHeader, Switch } from "../components/ui";
import { toast } from "../components/toast";
import { href } from "../lib/router";
import { ONBOARDING_PAGE } from "./Onboarding";
import { ConnectionTestControls, type FieldErrors, SettingsGroups } from "./SettingsCatalogue";
import { DataPanel } from "./SettingsData";

const MODES: { v: Mode; label: string; desc: string }[] = [
  { v: "skills_only", label: "Skills only", desc: "Inject skills and distil new ones. No training." },
  { v: "rl", label: "RL", desc: "Also fine-tune on your sessions whenever there is enough data." },
  { v: "auto", label: "Auto", desc: "RL, but only in scheduler windows (sleep, idle, free calendar)." },
];

/** `section`: a group to open on (`#/settings/rl`); on `rl`, what RL still needs is marked. */
export function SettingsPage(props: { section?: string }) {
  const status = useStatus();
  const config = useResource(() => api.config(), []);
  const catalogue = useResource(() => api.settings(), []);
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const loaded = catalogue.data !== undefined;
  useEffect(() => {
    if (!loaded || !props.section) return;
    if (props.section === "rl" && catalogue.data?.rl_missing.length) {
      const missing = catalogue.data.rl_missing;
      setFieldErrors((errs) => ({ ...errs, ...Object.fromEntries(missing.map((f) => [f.key, f.message])) }));
    }
    requestAnimationFrame(() => document.querySelector(`[data-testid="settings-group-${props.section}"]`)?.scrollIntoView({ block: "start" }));
  }, [loaded, props.section]);
  const [restart, setRestart] = useState(false);
  const [saving, setSaving] = useState<string | null>(null);
  const [err, setErr] = useState<string | null>(null);
  // Optimistic values while a PATCH is in flight, so the controls don't snap back.
  const [optimistic, setOptimistic] = useState<Partial<Pick<Status, "mode" | "rl_enabled" | "opd_enabled" | "learning_paused">>>({});

  const patch = async (p: ConfigPatch, what: string) => {
    setSaving(what);
    setErr(null);
    const flags: typeof optimistic = {};
    if (p.mode != null) flags.mode = p.mode;
    if (p.rl_enabled != null) flags.rl_enabled = p.rl_enabled;
    if (p.opd_enabled != null) flags.opd_enabled = p.opd_enabled;
    if (p.learning_paused != null) flags.learning_paused = p.learning_paused;
    setOptimistic(flags);
    try {
      const r = await api.patchConfig(p);
      saved(r);
      toast(`Saved: ${what}`);
      await status.reload();
      return true;
    } catch (e) {
      setErr(errorMessage(e));
      // "Enable RL" with settings missing: mark them, and take the user to them.
      if (e instanceof ApiError && e.fields.length) {
        setFieldErrors((errs) => ({ ...errs, ...Object.fromEntries(e.fields.map((f) => [f.key, f.message])) }));
        const group = e.fields.some((f) => f.key.startsWith("rl.")) ? "rl" : e.fields.some((f) => f.key.startsWith("opd.")) ? "teacher" : null;
        if (group) requestAnimationFrame(() => document.querySelector(`[data-testid="settings-group-${group}"]`)?.scrollIntoView({ block: "start" }));
      }
      await status.reload();
      return false;
    } finally {
      setSaving(null);
      setOptimistic({});
    }
  };

  /** After any saved change: the restart banner (only if a key needs one), fresh values. */
  function saved(r: ConfigChange | undefined) {
    if (r?.restart_required) setRestart(true);
    if (r?.config) config.set(r.config);
    void catalogue.reload();
    void status.reload();
  }

  const s = status.data ? { ...status.data, ...optimistic } : undefined;
  return (
    <div class="page" data-testid="page-settings">
      <PageHeader title="Settings" subtitle="Changes are written to config.yaml and take effect right away unless a restart is needed." />
      {restart && (
        <Notice tone="warn" testid="restart-banner">
          <strong>Restart needed.</strong> Some changes take effect after a restart: run <Kbd>metaclaw stop && metaclaw start</Kbd> (or quit and reopen
          the tray app).
        </Notice>
      )}
      <ErrorBox message={err} testid="settings-error" title="Not saved:" />
      {!s && <Loading what="settings" />}
      {s && (
        <>
          <Card title="Mode" testid="settings-mode">
            <fieldset class="segmented" disabled={saving !== null}>
              <legend class="sr-only">Mode</legend>
              {MODES.map((m) => (
                <label key={m.v} class={"segment" + (s.mode === m.v ? " selected" : "")}>
                  <input
                    type="radio"
                    name="mode"
                    value={m.v}
                    checked={s.mode === m.v}
                    onChange={() => void patch({ mode: m.v }, `mode ${m.label}`)}
                    data-testid={`mode-${m.v}`}
                  />
                  <span>{m.label}</span>
                </label>
              ))}
            </fieldset>
            <p class="muted small" data-testid="mode-desc">
              {MODES.find((m) => m.v === s.mode)?.desc}
            </p>
          </Card>

          <Card title="Learning" testid="settings-learning">
            <div class="stack">
              <Switch
                label="Reinforcement learning"
                description="Train a LoRA adapter on your recorded turns."
                checked={s.rl_enabled}
                disabled={saving !== null}
                onChange={(v) => void patch({ rl_enabled: v }, `RL ${v ? "on" : "off"}`)}
                testid="toggle-rl"
              />
              <Switch
                label="On-policy distillation (OPD)"
                description="Use a teacher model's log-probabilities as an extra training signal."
                checked={s.opd_enabled}
                disabled={saving !== null}
                onChange={(v) => void patch({ opd_enabled: v }, `OPD ${v ? "on" : "off"}`)}
                testid="toggle-opd"
              />
              <Switch
                label="Pause learning"
                description="Stop distilling skills and training until you resume. Skills are still injected."
                checked={s.learning_paused}
                disabled={saving !== null}
                onChange={(v) => void patch({ learning_paused: v }, v ? "learning paused" : "learning resumed")}
                testid="toggle-paused"
              />
            </div>
          </Card>

          <ErrorBox message={catalogue.error} />
          {catalogue.data ? (
            <SettingsGroups
              catalogue={catalogue.data}
              errors={fieldErrors}
              setErrors={setFieldErrors}
              onSaved={saved}
              extra={{
                llm: (
                  <>
                    <LlmForm config={config.data} loading={!config.data && !config.error} error={config.error} onSave={patch} saving={saving !== null} />
                    <ConnectionTests />
                  </>
                ),
                data: <DataPanel />,
              }}
            />
          ) : (
            <Loading what="settings" />
          )}
          <AgentInfo config={config.data} />
        </>
      )}
    </div>
  );
}

function LlmForm(props: {
  config: import("../lib/api").Config | undefined;
  loading: boolean;
  error: string | null;
  saving: boolean;
  onSave: (p: ConfigPatch, what: string) => Promise<boolean>;
}) {
  const llm: Partial<LlmConfig> = props.config?.llm ?? {};
  const [base, setBase] = useState("");
  const [model, setModel] = useState("");
  const [key, setKey] = useState("");
  useEffect(() => {
    setBase(llm.api_base ?? "");
    setModel(llm.model_id ?? "");
  }, [llm.api_base, llm.model_id]);

  const changed: NonNullable<ConfigPatch["llm"]> = {};
  if (base !== (llm.api_base ?? "")) changed.api_base = base.trim();
  if (model !== (llm.model_id ?? "")) changed.model_id = model.trim();
  if (key) changed.api_key = key; // only when the user typed one: the stored key is never sent back
  const dirty = Object.keys(changed).length > 0;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!dirty) return;
    if (await props.onSave({ llm: changed }, "LLM endpoint")) setKey("");
  };

  return (
    <div data-testid="settings-llm">
      <h3 class="card-subtitle">Endpoint</h3>
      <ErrorBox message={props.error} />
      {props.loading && <Loading what="config" />}
      <form class="form" onSubmit={submit}>
        <div class="field">
          <label for="llm-provider">Provider</label>
          <input id="llm-provider" type="text" value={llm.provider ?? ""} readOnly aria-describedby="llm-provider-hint" />
          <div class="field-hint muted" id="llm-provider-hint">
            Change the provider by <a href={href(ONBOARDING_PAGE)} data-testid="settings-onboarding">running the setup again</a> (or <Kbd>metaclaw setup</Kbd>).
          </div>
        </div>
        <div class="field">
          <label for="llm-base">API base URL</label>
          <input id="llm-base" type="url" value={base} onInput={(e) => setBase((e.currentTarget as HTMLInputElement).value)} placeholder="https://api.example.com/v1" data-testid="llm-api-base" />
        </div>
        <div class="field">
          <label for="llm-model">Model</label>
          <input id="llm-model" type="text" value={model} onInput={(e) => setModel((e.currentTarget as HTMLInputElement).value)} data-testid="llm-model" />
        </div>
        <div class="field">
          <label for="llm-key">API key</label>
          <input
            id="llm-key"
            type="password"
            autoComplete="off"
            value={key}
            onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
            placeholder="•••• (unchanged)"
            aria-describedby="llm-key-hint"
            data-testid="llm-api-key"
          />
          <div class="field-hint muted" id="llm-key-hint">
            {llm.api_key ? <>Stored key: <span class="mono">{llm.api_key}</span>. </> : <>No key stored. </>}
            Leave empty to keep it.
          </div>
        </div>
        <div class="form-actions">
          <button type="submit" class="btn btn-primary" disabled={!dirty || props.saving} data-testid="llm-save">
            Save endpoint
          </button>
          {dirty && (
            <button
              type="button"
              class="btn"
              onClick={() => {
                setBase(llm.api_base ?? "");
                setModel(llm.model_id ?? "");
                setKey("");
              }}
            >
              Discard
            </button>
          )}
        </div>
      </form>
    </div>
  );
}

function ConnectionTests() {
  const targets: { v: "llm" | "evolver" | "embedding"; label: string }[] = [
    { v: "llm", label: "LLM" },
    { v: "evolver", label: "Skill evolver" },
    { v: "embedding", label: "Embeddings" },
  ];
  return (
    <div data-testid="settings-tests">
      <ul class="tests">
        {targets.map((t) => (
          <li key={t.v}>
            <ConnectionTestControls target={t.v} label={t.label} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function AgentInfo(props: { config: import("../lib/api").Config | undefined }) {
  const c = props.config;
  if (!c) return null;
  const host = c.proxy?.host || "127.0.0.1";
  const port = c.proxy?.port ?? location.port;
  return (
    <Card title="Connect your agent" testid="settings-agent">
      <p>
        Point your agent at <span class="mono">{`http://${host}:${port}/v1`}</span> (OpenAI) or <span class="mono">{`http://${host}:${port}`}</span>{" "}
        (Anthropic). Print the proxy key with <Kbd>metaclaw config proxy.api_key</Kbd>.
      </p>
      <details>
        <summary>Effective configuration (secrets masked)</summary>
        <pre class="code small" data-testid="config-json">
          {JSON.stringify(c, null, 2)}
        </pre>
      </details>
    </Card>
  );
}
