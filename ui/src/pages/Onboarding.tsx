// First run: choose and test an upstream, add skills, connect an agent. Opened automatically
// while no upstream is configured (status.needs_onboarding) and from Settings at any time.
// Every step calls the same core operations `metaclaw setup` and Settings use.
import { useEffect, useRef, useState } from "preact/hooks";
import { useStatus } from "../App";
import {
  api,
  errorMessage,
  type AgentSetup,
  type EndpointCandidate,
  type EndpointModels,
  type EndpointTest,
  type DetectedAgent,
  type EndpointFailure,
  type Installed,
  type Presets,
  type ProviderPreset,
  type WiringReport,
} from "../lib/api";
import { href, navigate } from "../lib/router";
import { Badge, ErrorBox, Kbd, Loading, Notice } from "../components/ui";

const STEPS = ["Provider", "Test connection", "Skills", "Connect your agent", "Done"] as const;

/** The endpoint chosen so far (steps 1 and 2). */
interface Endpoint {
  preset: ProviderPreset;
  base: string;
  /** `null`: keep the stored key (only ever sent to the stored endpoint). */
  key: string | null;
  model: string;
  /** llm.auth_method passthrough: the agent's own sign-in is forwarded for its turns. */
  ownSignIn: boolean;
}

export function OnboardingPage() {
  const presets = useLoad(() => api.presets());
  const [step, setStep] = useState(0);
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [saved, setSaved] = useState<{ base: string; model: string } | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const firstRender = useRef(true);

  // Keyboard and screen-reader users land on the new step's title.
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    heading.current?.focus();
  }, [step]);

  return (
    <div class="page onboarding" data-testid="page-onboarding" data-step={step + 1}>
      <header class="page-header">
        <div>
          <h1 tabIndex={-1} data-page-title>
            Welcome to MetaClaw
          </h1>
          <p class="muted">A few steps to put MetaClaw between your agent and your LLM. Nothing is saved until you say so.</p>
        </div>
      </header>
      <ol class="steps" aria-label="Setup steps" data-testid="onboarding-steps">
        {STEPS.map((label, i) => (
          <li key={label} class={"step" + (i === step ? " current" : i < step ? " done" : "")} aria-current={i === step ? "step" : undefined}>
            <span class="step-num" aria-hidden="true">
              {i < step ? "✓" : i + 1}
            </span>
            <span class="step-label">{label}</span>
          </li>
        ))}
      </ol>
      <section class="card onboarding-card" aria-labelledby="onboarding-step-title">
        <h2 id="onboarding-step-title" class="card-title" tabIndex={-1} ref={heading} data-testid="onboarding-step-title">
          Step {step + 1} of {STEPS.length}: {STEPS[step]}
        </h2>
        <ErrorBox message={presets.error} />
        {!presets.data && !presets.error && <Loading what="providers" />}
        {presets.data && step === 0 && (
          <ProviderStep
            presets={presets.data}
            initial={endpoint}
            onNext={(e) => {
              setEndpoint(e);
              setStep(1);
            }}
          />
        )}
        {endpoint && step === 1 && (
          <TestStep
            endpoint={endpoint}
            onBack={(model) => {
              setEndpoint({ ...endpoint, model });
              setStep(0);
            }}
            onSaved={(model) => {
              setEndpoint({ ...endpoint, model });
              setSaved({ base: endpoint.base, model });
              setStep(2);
            }}
          />
        )}
        {step === 2 && <SkillsStep onBack={() => setStep(1)} onNext={() => setStep(3)} />}
        {step === 3 && <AgentStep onBack={() => setStep(2)} onNext={() => setStep(4)} />}
        {step === 4 && <DoneStep saved={saved} />}
      </section>
    </div>
  );
}

/** A one-shot load with its error, for data a step reads once. */
function useLoad<T>(fn: () => Promise<T>) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    fn().then(
      (d) => live && setData(d),
      (e) => live && setError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, []);
  return { data, error, setData };
}

function ProviderStep(props: { presets: Presets; initial: Endpoint | null; onNext: (e: Endpoint) => void }) {
  const list = props.presets.presets;
  const start = props.initial?.preset ?? list.find((p) => p.name === props.presets.current) ?? list[0];
  const [preset, setPreset] = useState<ProviderPreset>(start);
  const [base, setBase] = useState(props.initial?.base ?? (props.presets.current === start.name ? "" : start.api_base));
  const [key, setKey] = useState(props.initial?.key ?? "");
  const [ownSignIn, setOwnSignIn] = useState(props.initial?.ownSignIn ?? props.presets.auth_method === "passthrough");
  const [error, setError] = useState<string | null>(null);
  const config = useLoad(() => api.config());
  const storedBase = config.data?.llm?.api_base ?? "";

  // Reopened from Settings: start from the stored endpoint.
  useEffect(() => {
    if (!props.initial && storedBase && props.presets.current === start.name) setBase(storedBase);
  }, [storedBase]);

  const choose = (p: ProviderPreset) => {
    setPreset(p);
    setBase(p.name === props.presets.current && storedBase ? storedBase : p.api_base);
    setError(null);
  };
  const keepsStoredKey = props.presets.has_key && !!storedBase && sameBase(base, storedBase);

  const submit = (e: Event) => {
    e.preventDefault();
    const b = base.trim();
    if (!/^https?:\/\/\S+$/.test(b)) {
      setError("Enter the base URL, starting with http:// or https:// (for example http://127.0.0.1:8000/v1).");
      return;
    }
    // With the agent's own sign-in MetaClaw's key is optional: the next step says what needs one.
    if (preset.needs_key && !ownSignIn && !key.trim() && !keepsStoredKey) {
      setError(`${preset.label} needs an API key.`);
      return;
    }
    const suggested = props.initial?.model || (preset.name === props.presets.current ? config.data?.llm?.model_id : "") || preset.model;
    props.onNext({ preset, base: b, key: key.trim() ? key.trim() : keepsStoredKey ? null : "", model: suggested ?? "", ownSignIn });
  };

  return (
    <form onSubmit={submit} class="stack" data-testid="onboarding-provider">
      <fieldset class="presets">
        <legend>Where should MetaClaw send your agent's requests?</legend>
        {list.map((p) => (
          <label key={p.name} class={"preset" + (preset.name === p.name ? " selected" : "")}>
            <input type="radio" name="preset" value={p.name} checked={preset.name === p.name} onChange={() => choose(p)} data-testid={`preset-${p.name}`} />
            <span class="preset-label">{p.label}</span>
            <span class="preset-meta muted small">{p.local ? "on this computer · no key" : p.api_base ? hostOf(p.api_base) : "any OpenAI-compatible URL"}</span>
          </label>
        ))}
      </fieldset>
      <label class="check" data-testid="onboarding-own-sign-in">
        <input type="checkbox" checked={ownSignIn} onChange={(e) => setOwnSignIn((e.currentTarget as HTMLInputElement).checked)} /> Use my agent's own sign-in
        (for example a Claude Pro or Max subscription): your agent's credential is forwarded to this endpoint untouched for its own requests, and never stored.
      </label>
      <div class="form">
        <div class="field">
          <label for="ob-base">Base URL</label>
          <input
            id="ob-base"
            type="url"
            required
            value={base}
            placeholder="https://api.example.com/v1"
            onInput={(e) => setBase((e.currentTarget as HTMLInputElement).value)}
            aria-describedby="ob-base-hint"
            data-testid="onboarding-base"
          />
          <div class="field-hint muted" id="ob-base-hint">
            {preset.provider === "anthropic" ? "Anthropic's Messages API, with or without /v1." : "The OpenAI-compatible URL, usually ending in /v1."}
          </div>
        </div>
        <div class="field">
          <label for="ob-key">{ownSignIn ? "MetaClaw's own API key (optional)" : `API key${preset.needs_key ? "" : " (optional)"}`}</label>
          <input
            id="ob-key"
            type="password"
            autoComplete="off"
            value={key}
            placeholder={keepsStoredKey ? "•••• (stored key kept)" : preset.local ? "not needed" : ""}
            onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
            aria-describedby="ob-key-hint"
            data-testid="onboarding-key"
          />
          <div class="field-hint muted" id="ob-key-hint" data-testid="onboarding-key-hint">
            {ownSignIn
              ? "Your agent signs in for its own requests. MetaClaw's own work (learning skills, the judge, connection checks) needs a key of its own for this endpoint. "
              : ""}
            {keepsStoredKey ? "Leave empty to keep the stored key. " : ""}Saved only in config.yaml on this computer (mode 0600).
          </div>
        </div>
      </div>
      <ErrorBox message={error} testid="onboarding-provider-error" />
      <div class="form-actions">
        <button type="submit" class="btn btn-primary" data-testid="onboarding-next">
          Next: test the connection
        </button>
        <a class="btn" href={href("overview")} data-testid="onboarding-skip">
          Skip for now
        </a>
      </div>
    </form>
  );
}

function TestStep(props: { endpoint: Endpoint; onBack: (model: string) => void; onSaved: (model: string) => void }) {
  const e = props.endpoint;
  const candidate = (model: string): EndpointCandidate => {
    const c: EndpointCandidate = { provider: e.preset.provider, api_base: e.base, model, auth_method: e.ownSignIn ? "passthrough" : "api_key" };
    if (e.key !== null) c.api_key = e.key;
    return c;
  };
  // The agent's own sign-in and no key of MetaClaw's: nothing to test with, and MetaClaw's own
  // calls cannot run until one is set. Said here, and on the Overview until it is fixed.
  const noOwnKey = e.ownSignIn && e.key === "";
  const [models, setModels] = useState<EndpointModels | "loading">("loading");
  const [model, setModel] = useState(e.model);
  const [typed, setTyped] = useState(false);
  const [result, setResult] = useState<EndpointTest | "busy" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let live = true;
    api.candidateModels(candidate("")).then(
      (m) => {
        if (!live) return;
        setModels(m);
        if (m.models.length && !m.models.includes(model)) setModel(m.models[0]);
        if (!m.models.length) setTyped(true);
      },
      (err) => {
        if (!live) return;
        setModels({ models: [], failure: null });
        setTyped(true);
        setError(errorMessage(err));
      },
    );
    return () => {
      live = false;
    };
  }, []);

  const test = async () => {
    setError(null);
    if (!model.trim()) {
      setError("Choose or type a model first.");
      return;
    }
    setResult("busy");
    try {
      setResult(await api.testCandidate(candidate(model.trim())));
    } catch (err) {
      setResult(null);
      setError(errorMessage(err));
    }
  };

  const save = async () => {
    setSaving(true);
    setError(null);
    try {
      await api.saveEndpoint(candidate(model.trim()));
      props.onSaved(model.trim());
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setSaving(false);
    }
  };

  const outcome = result !== null && result !== "busy" ? result : null;
  const passed = outcome?.ok === true;
  const failed = outcome && !outcome.ok ? outcome : null;
  const list = models === "loading" ? [] : models.models;

  return (
    <form
      class="stack"
      data-testid="onboarding-test"
      onSubmit={(ev) => {
        ev.preventDefault();
        void (passed || noOwnKey ? save() : test());
      }}
    >
      <p>
        <strong>{e.preset.label}</strong> at <span class="mono break">{e.base}</span>
      </p>
      {noOwnKey && (
        <Notice tone="warn" testid="onboarding-own-endpoint">
          Your agent's own sign-in will be forwarded for its requests. MetaClaw has no key of its own for this endpoint, so it cannot test the connection, and
          learning skills, the judge and connection checks will not run until you give it one.{" "}
          <button type="button" class="btn btn-small" onClick={() => props.onBack(model)} data-testid="onboarding-add-own-key">
            Add a key for MetaClaw
          </button>
        </Notice>
      )}
      {models === "loading" && <Loading what="the endpoint's models" />}
      {models !== "loading" && (
        <div class="form">
          <div class="field">
            <label for="ob-model">Model</label>
            {list.length > 0 && !typed ? (
              <select
                id="ob-model"
                value={model}
                onChange={(ev) => {
                  setModel((ev.currentTarget as HTMLSelectElement).value);
                  setResult(null);
                }}
                aria-describedby="ob-model-hint"
                data-testid="onboarding-model-select"
              >
                {list.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id="ob-model"
                type="text"
                value={model}
                placeholder="model id, e.g. gpt-4o"
                onInput={(ev) => {
                  setModel((ev.currentTarget as HTMLInputElement).value);
                  setResult(null);
                }}
                aria-describedby="ob-model-hint"
                data-testid="onboarding-model-input"
              />
            )}
            <div class="field-hint muted" id="ob-model-hint" data-testid="onboarding-models-hint">
              {list.length > 0 ? (
                <>
                  {list.length} model{list.length === 1 ? "" : "s"} listed by the endpoint.{" "}
                  <button type="button" class="btn-link" onClick={() => setTyped(!typed)}>
                    {typed ? "Pick from the list" : "Type another"}
                  </button>
                </>
              ) : models.failure ? (
                <>The endpoint did not list its models ({models.failure.summary}); type the model id.</>
              ) : (
                <>The endpoint lists no models; type the model id.</>
              )}
            </div>
          </div>
        </div>
      )}
      <div class="test-outcome" aria-live="polite" data-testid="onboarding-test-result">
        {result === "busy" && <Loading what="a one-token reply" />}
        {outcome?.ok && (
          <Notice tone="ok" testid="onboarding-test-ok">
            ✓ Connected: <span class="mono">{model}</span> answered in {Math.round(outcome.latency_ms)} ms.
          </Notice>
        )}
        {failed?.failure && <FailureBox failure={failed.failure} />}
      </div>
      <ErrorBox message={error} testid="onboarding-test-error" />
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => props.onBack(model)}>
          Back
        </button>
        {!noOwnKey && (
          <button type="button" class={"btn" + (passed ? "" : " btn-primary")} disabled={result === "busy" || models === "loading"} onClick={() => void test()} data-testid="onboarding-test-button">
            {result === "busy" ? "Testing…" : "Test connection"}
          </button>
        )}
        {noOwnKey ? (
          <button type="button" class="btn btn-primary" disabled={saving || !model.trim()} onClick={() => void save()} data-testid="onboarding-save-own-sign-in">
            {saving ? "Saving…" : "Save without a key of MetaClaw's"}
          </button>
        ) : passed ? (
          <button type="submit" class="btn btn-primary" disabled={saving} data-testid="onboarding-save">
            {saving ? "Saving…" : "Save and continue"}
          </button>
        ) : (
          failed && (
            <button type="button" class="btn btn-danger-outline" disabled={saving || !model.trim()} onClick={() => void save()} data-testid="onboarding-save-anyway">
              Save anyway
            </button>
          )
        )}
      </div>
    </form>
  );
}

const KIND_HELP: Record<string, string> = {
  unauthorized: "Check the API key.",
  not_found: "Check the base URL and the model name.",
  rate_limited: "The provider is limiting requests; try again in a moment.",
  dns: "Check the host name in the base URL.",
  connection_refused: "Is the server running on that port?",
  tls: "The server's certificate was not accepted, or it does not speak HTTPS (try http://).",
  timeout: "The server did not answer in time; a local model may still be loading.",
};

function FailureBox(props: { failure: EndpointFailure }) {
  const f = props.failure;
  return (
    <div class="notice notice-error" role="alert" data-testid="onboarding-test-failure" data-kind={f.kind}>
      <strong>Connection failed: </strong>
      <span data-testid="onboarding-failure-summary">{f.summary}</span>
      {KIND_HELP[f.kind] && <div class="small">{KIND_HELP[f.kind]}</div>}
      <details>
        <summary>Details</summary>
        <p class="mono small break">{f.detail}</p>
      </details>
    </div>
  );
}

function SkillsStep(props: { onBack: () => void; onNext: () => void }) {
  const library = useLoad(() => api.library());
  const [installed, setInstalled] = useState<Installed | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const bundled = library.data?.bundled;

  const install = async () => {
    setBusy(true);
    setError(null);
    try {
      setInstalled(await api.installBundled());
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack" data-testid="onboarding-skills">
      <p>
        Skills are short instructions MetaClaw adds to a request when they fit the task. MetaClaw also distils new ones from your sessions; you review
        them in the Inbox.
      </p>
      <ErrorBox message={library.error ?? error} testid="onboarding-skills-error" />
      {!library.data && !library.error && <Loading what="the skill bank" />}
      {installed ? (
        <Notice tone="ok" testid="onboarding-skills-installed">
          Installed {installed.installed.length} of {installed.bundled} built-in skills into <span class="mono break">{installed.dir}</span>
          {installed.installed.length < installed.bundled ? " (the ones already there were kept)" : ""}. Edit them on the Skills page.
        </Notice>
      ) : (
        library.data && (
          <div class="choice-row">
            <button type="button" class="btn btn-primary" disabled={busy} onClick={() => void install()} data-testid="onboarding-install-skills">
              {busy ? "Installing…" : `Install the ${bundled} built-in skills`}
            </button>
            <button type="button" class="btn" onClick={props.onNext} data-testid="onboarding-skills-empty">
              Start with an empty folder
            </button>
          </div>
        )
      )}
      {!installed && library.data && (
        <p class="muted small">
          Installing copies them into <span class="mono break">{library.data.user_dir ?? "your skills folder"}</span> so you can edit them. An empty folder
          fills with the skills MetaClaw learns{library.data.include_bundled ? "; the built-in bank is still read unless skills.include_bundled is off" : ""}.
        </p>
      )}
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onBack}>
          Back
        </button>
        {installed && (
          <button type="button" class="btn btn-primary" onClick={props.onNext} data-testid="onboarding-skills-next">
            Next: connect your agent
          </button>
        )}
      </div>
    </div>
  );
}

function AgentStep(props: { onBack: () => void; onNext: () => void }) {
  const setup = useLoad(() => api.agents());
  const [report, setReport] = useState<{ agent: DetectedAgent; report: WiringReport; undone?: WiringReport } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const connect = async (agent: DetectedAgent) => {
    setBusy(agent.claw);
    setError(null);
    try {
      // Connecting adds this agent to those already connected (claw_type lists them all).
      const agents = (setup.data?.detected ?? []).filter((a) => a.wired && a.claw !== agent.claw).map((a) => a.claw);
      agents.push(agent.claw);
      const set: Record<string, string> = { claw_type: agents.join(", ") };
      await api.patchConfig({ set });
      setReport({ agent, report: await api.wire() });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };
  const undo = async () => {
    if (!report) return;
    setBusy("undo");
    setError(null);
    try {
      setReport({ ...report, undone: await api.unwire() });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const s = setup.data;
  return (
    <div class="stack" data-testid="onboarding-agent">
      <ErrorBox message={setup.error ?? error} testid="onboarding-agent-error" />
      {!s && !setup.error && <Loading what="installed agents" />}
      {s && s.detected.length > 0 && !report && (
        <>
          <p>Found on this computer. Connecting changes the agent's settings so its requests go through MetaClaw; you can undo it.</p>
          <ul class="list agents" data-testid="onboarding-agents">
            {s.detected.map((a) => (
              <li key={a.claw} class="agent-row">
                <span>
                  <strong>{a.name}</strong> <span class="muted small mono break">{a.found}</span> {a.wired && <Badge tone="ok">connected</Badge>}
                </span>
                <button type="button" class="btn btn-primary btn-small" disabled={busy !== null} onClick={() => void connect(a)} data-testid={`connect-${a.claw}`}>
                  {busy === a.claw ? "Connecting…" : `Connect ${a.name}`}
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
      {report && (
        <div class="stack" data-testid="onboarding-wired">
          <p>
            <strong>{report.agent.name}</strong>: what changed
          </p>
          <pre class="code small">{report.report.lines.join("\n") || "nothing to change"}</pre>
          {report.report.manual && <Notice tone="warn">{report.report.manual}</Notice>}
          {report.undone ? (
            <Notice testid="onboarding-unwired">
              Undone: <span class="mono">{report.undone.lines.join(" · ")}</span>
            </Notice>
          ) : (
            <p class="muted small">
              To undo, press{" "}
              <button type="button" class="btn btn-small" disabled={busy !== null} onClick={() => void undo()} data-testid="onboarding-unwire">
                Restore {report.agent.name}'s settings
              </button>{" "}
              now, or later run <Kbd>metaclaw stop --unwire</Kbd>.
            </p>
          )}
        </div>
      )}
      {s && s.detected.length === 0 && <p data-testid="onboarding-no-agent">No agent found on this computer (OpenClaw, Claude Code, Codex, Qwen Code, Hermes, CoPaw, IronClaw, ZeroClaw, PicoClaw, NanoClaw). Point yours at MetaClaw by hand:</p>}
      {s && <ManualSnippet s={s} open={s.detected.length === 0} />}
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onBack}>
          Back
        </button>
        <button type="button" class="btn btn-primary" onClick={props.onNext} data-testid="onboarding-agent-next">
          {report && !report.undone ? "Next" : "Next: finish"}
        </button>
      </div>
    </div>
  );
}

function ManualSnippet(props: { s: AgentSetup; open: boolean }) {
  const s = props.s;
  const text = [
    `Base URL (OpenAI API):    ${s.base_url}`,
    `Base URL (Anthropic API): ${s.anthropic_base_url}`,
    `API key:                  ${s.api_key}`,
    `Model:                    ${s.model}`,
  ].join("\n");
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  const body = (
    <div class="stack">
      <pre class="code small" data-testid="onboarding-snippet">
        {text}
      </pre>
      <div>
        <button type="button" class="btn btn-small" onClick={() => void copy()}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
    </div>
  );
  if (props.open) return body;
  return (
    <details>
      <summary>Connect another agent by hand</summary>
      {body}
    </details>
  );
}

function DoneStep(props: { saved: { base: string; model: string } | null }) {
  const status = useStatus();
  const finish = async () => {
    await status.reload();
    navigate("overview");
  };
  return (
    <div class="stack" data-testid="onboarding-done">
      <Notice tone="ok">
        MetaClaw is ready
        {props.saved ? (
          <>
            : requests go to <span class="mono break">{props.saved.model}</span> at <span class="mono break">{props.saved.base}</span>
          </>
        ) : null}
        .
      </Notice>
      <p>Next steps:</p>
      <ul class="next-steps">
        <li>
          <strong>Chat with your agent.</strong> Every turn goes through MetaClaw; watch them arrive on the <a href={href("sessions")}>Sessions</a> page.
        </li>
        <li>
          <strong>Review what it learns.</strong> New skills distilled from your sessions wait in the <a href={href("inbox")}>Inbox</a>.
        </li>
        <li>
          <strong>Enable RL when you want.</strong> Fine-tuning on your sessions is {status.data?.rl_enabled ? "on" : "off"}; switch it in{" "}
          <a href={href("settings")}>Settings</a>.
        </li>
      </ul>
      <div class="form-actions">
        <button type="button" class="btn btn-primary" onClick={() => void finish()} data-testid="onboarding-finish">
          Open the Overview
        </button>
      </div>
    </div>
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function sameBase(a: string, b: string): boolean {
  const norm = (s: string) => s.trim().replace(/\/+$/, "");
  return norm(a) === norm(b);
}

/** The route of this page (`#/welcome`). */
export const ONBOARDING_PAGE = "welcome";
