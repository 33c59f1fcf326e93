import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import { api, onAuthState, type Status } from "./lib/api";
import { connectEvents, disconnectEvents, useLive, useLiveState } from "./lib/events";
import { useResource, type Resource } from "./lib/resource";
import { href, navigate, useRoute } from "./lib/router";
import { setChoice, useTheme, type ThemeChoice } from "./lib/theme";
import { setAgent, useAgent } from "./lib/agent";
import { Toasts } from "./components/toast";
import { Kbd } from "./components/ui";
import { Overview } from "./pages/Overview";
import { SkillsPage } from "./pages/Skills";
import { SkillDetailPage } from "./pages/SkillDetail";
import { InboxPage } from "./pages/Inbox";
import { SessionsPage } from "./pages/Sessions";
import { SessionDetailPage } from "./pages/SessionDetail";
import { TrainingPage } from "./pages/Training";
import { SchedulerPage } from "./pages/Scheduler";
import { SettingsPage } from "./pages/Settings";
import { OnboardingPage, ONBOARDING_PAGE } from "./pages/Onboarding";

const StatusContext = createContext<Resource<Status> | null>(null);

/** The daemon's /api/status, shared by the nav, Overview, Training and Settings. */
export function useStatus(): Resource<Status> {
  const s = useContext(StatusContext);
  if (!s) throw new Error("useStatus outside <App>");
  return s;
}

const NAV: { page: string; label: string }[] = [
  { page: "overview", label: "Overview" },
  { page: "skills", label: "Skills" },
  { page: "inbox", label: "Inbox" },
  { page: "sessions", label: "Sessions" },
  { page: "training", label: "Training" },
  { page: "scheduler", label: "Scheduler" },
  { page: "settings", label: "Settings" },
];

export function App() {
  const [auth, setAuth] = useState<"ok" | "unauthorized" | "offline">("ok");
  useEffect(() => onAuthState(setAuth), []);
  const status = useResource(() => api.status(), []);
  useLive(["state", "proposals", "training", "turn", "skill_changed", "session_started", "session_ended", "evolution_failed"], () => void status.reload());

  useEffect(() => {
    if (auth === "unauthorized") disconnectEvents();
    else if (status.data) connectEvents();
  }, [auth, status.data !== undefined]);

  if (auth === "unauthorized") return <Unauthorized />;

  return (
    <StatusContext.Provider value={status}>
      <Shell status={status.data} offline={auth === "offline"} onRetry={() => void status.reload()} />
    </StatusContext.Provider>
  );
}

function Shell(props: { status: Status | undefined; offline: boolean; onRetry: () => void }) {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const onboardingOffered = useRef(false);

  // First run (no upstream configured): open on onboarding instead of an Overview with no
  // way forward. Once per page load, so "Skip for now" is respected until the next visit.
  useEffect(() => {
    if (!props.status || onboardingOffered.current) return;
    onboardingOffered.current = true;
    if (props.status.needs_onboarding && route.page === "overview") navigate(ONBOARDING_PAGE);
  }, [props.status !== undefined]);

  // Move focus to the new page's heading on navigation (not on first load).
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const h = main.current?.querySelector<HTMLElement>("[data-page-title]");
    h?.focus({ preventScroll: false });
  }, [route.page, route.params.join("/")]);

  const pending = props.status?.counts?.pending_proposals ?? 0;
  return (
    <div class="shell">
      <a class="skip-link" href="#main" onClick={(e) => { e.preventDefault(); main.current?.focus(); }}>
        Skip to content
      </a>
      <aside class="sidebar">
        <div class="brand">
          <span class="brand-mark" aria-hidden="true">
            ◆
          </span>
          <span class="brand-name">MetaClaw</span>
        </div>
        <nav aria-label="Main">
          <ul class="nav">
            {NAV.map((n) => {
              const active = route.page === n.page;
              return (
                <li key={n.page}>
                  <a
                    href={href(n.page)}
                    class={"nav-link" + (active ? " active" : "")}
                    aria-current={active ? "page" : undefined}
                    data-testid={`nav-${n.page}`}
                  >
                    <span>{n.label}</span>
                    {n.page === "inbox" && pending > 0 && (
                      <span class="nav-count" data-testid="nav-inbox-count" aria-label={`${pending} pending`}>
                        {pending}
                      </span>
                    )}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
        <AgentPicker />
        <div class="sidebar-foot">
          <LiveIndicator />
          <ThemeToggle />
          {props.status && <div class="muted small">v{props.status.version}</div>}
        </div>
      </aside>
      <main id="main" ref={main} tabIndex={-1} class="main">
        {props.offline && (
          <div class="notice notice-error banner" role="alert" data-testid="offline">
            Cannot reach the MetaClaw daemon. Start it with <Kbd>metaclaw start</Kbd>, then{" "}
            <button type="button" class="btn btn-small" onClick={props.onRetry}>
              retry
            </button>
          </div>
        )}
        <Page page={route.page} params={route.params} />
      </main>
      <Toasts />
    </div>
  );
}

function Page(props: { page: string; params: string[] }) {
  const [a] = props.params;
  switch (props.page) {
    case "overview":
      return <Overview />;
    case "skills":
      return a ? <SkillDetailPage key={a} name={a} /> : <SkillsPage />;
    case "new-skill":
      return <SkillDetailPage key="__new__" name={null} />;
    case "inbox":
      return <InboxPage />;
    case "sessions":
      return a ? <SessionDetailPage key={a} id={a} /> : <SessionsPage />;
    case "training":
      return <TrainingPage />;
    case "scheduler":
      return <SchedulerPage />;
    case "settings":
      return <SettingsPage section={a} />;
    case ONBOARDING_PAGE:
      return <OnboardingPage />;
    default:
      return (
        <div class="page">
          <h1 tabIndex={-1} data-page-title>
            Page not found
          </h1>
          <p>
            There is no page called “{props.page}”. <a href={href("overview")}>Go to the overview</a>.
          </p>
        </div>
      );
  }
}

function LiveIndicator() {
  const s = useLiveState();
  const label = s === "live" ? "Live" : s === "connecting" ? "Connecting…" : "Offline";
  return (
    <div class={`live live-${s}`} data-testid="live-state" data-state={s} title="Live updates from the daemon">
      <span class="live-dot" aria-hidden="true" />
      {label}
    </div>
  );
}

/** Filters sessions, skills, proposals and charts to one agent; shown once there are agents. */
function AgentPicker() {
  const agent = useAgent() ?? "";
  const agents = useResource(() => api.agentList(), []);
  useLive(["session_started"], () => void agents.reload());
  const names = (agents.data ?? []).map((a) => a.name);
  if (names.length === 0) return null;
  return (
    <label class="agent-picker">
      <span class="muted small">Agent</span>
      <select value={agent} onChange={(e) => setAgent((e.target as HTMLSelectElement).value)} data-testid="agent-picker">
        <option value="">All agents</option>
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
}

function ThemeToggle() {
  const { choice } = useTheme();
  const opts: { v: ThemeChoice; label: string }[] = [
    { v: "system", label: "Auto" },
    { v: "light", label: "Light" },
    { v: "dark", label: "Dark" },
  ];
  return (
    <fieldset class="segmented segmented-small" data-testid="theme-toggle">
      <legend class="sr-only">Theme</legend>
      {opts.map((o) => (
        <label key={o.v} class={"segment" + (choice === o.v ? " selected" : "")}>
          <input type="radio" name="theme" value={o.v} checked={choice === o.v} onChange={() => setChoice(o.v)} data-testid={`theme-${o.v}`} />
          <span>{o.label}</span>
        </label>
      ))}
    </fieldset>
  );
}

function Unauthorized() {
  return (
    <main class="unauth" data-testid="unauthorized">
      <div class="unauth-card card">
        <div class="brand">
          <span class="brand-mark" aria-hidden="true">
            ◆
          </span>
          <span class="brand-name">MetaClaw</span>
        </div>
        <h1>Open the dashboard with <Kbd>metaclaw dashboard</Kbd></h1>
        <p>
          This page needs a one-time login link. Run <Kbd>metaclaw dashboard</Kbd> in a terminal: it opens the dashboard in your browser
          (or prints the link with <Kbd>--print-url</Kbd>). Links work once and expire after 5 minutes.
        </p>
        <p class="muted">Your browser session may have ended because the daemon was reinstalled or its token was rotated.</p>
      </div>
    </main>
  );
}
