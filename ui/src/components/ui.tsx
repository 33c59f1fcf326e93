// Small shared building blocks. Everything interactive is a real <button>, <a>, or <input>.
import type { ComponentChildren, JSX } from "preact";
import { useMemo } from "preact/hooks";
import { parseDiff, diffStats } from "../lib/diff";
import { renderMarkdown } from "../lib/markdown";
import { fraction } from "../lib/format";

export function PageHeader(props: { title: string; subtitle?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        <h1 tabIndex={-1} data-page-title>
          {props.title}
        </h1>
        {props.subtitle && <p class="muted">{props.subtitle}</p>}
      </div>
      {props.actions && <div class="page-actions">{props.actions}</div>}
    </header>
  );
}

export function Card(props: {
  title?: ComponentChildren;
  children: ComponentChildren;
  testid?: string;
  class?: string;
  actions?: ComponentChildren;
}) {
  return (
    <section class={"card " + (props.class ?? "")} data-testid={props.testid}>
      {(props.title || props.actions) && (
        <div class="card-head">
          {props.title && <h2 class="card-title">{props.title}</h2>}
          {props.actions && <div class="card-actions">{props.actions}</div>}
        </div>
      )}
      {props.children}
    </section>
  );
}

export function Empty(props: { title: string; children?: ComponentChildren; testid?: string }) {
  return (
    <div class="empty" data-testid={props.testid ?? "empty"}>
      <p class="empty-title">{props.title}</p>
      {props.children && <div class="empty-body">{props.children}</div>}
    </div>
  );
}

export function ErrorBox(props: { message: string | null | undefined; testid?: string; title?: string }) {
  if (!props.message) return null;
  return (
    <div class="notice notice-error" role="alert" data-testid={props.testid ?? "error"}>
      {props.title && <strong>{props.title} </strong>}
      {props.message}
    </div>
  );
}

export function Notice(props: { tone?: "info" | "ok" | "warn" | "error"; children: ComponentChildren; testid?: string }) {
  return (
    <div class={`notice notice-${props.tone ?? "info"}`} role="status" data-testid={props.testid}>
      {props.children}
    </div>
  );
}

export function Loading(props: { what?: string }) {
  return (
    <p class="muted loading" role="status" aria-live="polite">
      Loading{props.what ? " " + props.what : ""}…
    </p>
  );
}

export function Badge(props: { tone?: "ok" | "warn" | "error" | "info" | "neutral" | "accent"; children: ComponentChildren; testid?: string; title?: string }) {
  return (
    <span class={`badge badge-${props.tone ?? "neutral"}`} data-testid={props.testid} title={props.title}>
      {props.children}
    </span>
  );
}

export function Dot(props: { tone: "ok" | "warn" | "error" | "neutral"; label: string }) {
  return <span class={`dot dot-${props.tone}`} role="img" aria-label={props.label} title={props.label} />;
}

/** A checkbox styled as a switch (role="switch" keeps its semantics for screen readers). */
export function Switch(props: {
  label: ComponentChildren;
  checked: boolean;
  onChange: (v: boolean) => void;
  disabled?: boolean;
  testid?: string;
  description?: ComponentChildren;
  compact?: boolean;
  ariaLabel?: string;
}) {
  return (
    <label class={"switch" + (props.compact ? " switch-compact" : "")}>
      <input
        type="checkbox"
        role="switch"
        checked={props.checked}
        disabled={props.disabled}
        aria-checked={props.checked}
        aria-label={props.ariaLabel}
        data-testid={props.testid}
        onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)}
      />
      <span class="switch-track" aria-hidden="true">
        <span class="switch-thumb" />
      </span>
      <span class="switch-text">
        <span class={props.compact ? "sr-only" : "switch-label"}>{props.label}</span>
        {props.description && <span class="switch-desc muted">{props.description}</span>}
      </span>
    </label>
  );
}

export function Progress(props: { value: number | null | undefined; label: string; testid?: string }) {
  const f = fraction(props.value);
  const pct = f === null ? null : Math.round(f * 100);
  return (
    <div
      class={"progress" + (pct === null ? " progress-indeterminate" : "")}
      role="progressbar"
      aria-label={props.label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct ?? undefined}
      data-testid={props.testid}
    >
      <div class="progress-fill" style={pct === null ? undefined : { width: `${pct}%` }} />
    </div>
  );
}

export function ScoreBar(props: { score: number | null | undefined; max?: number }) {
  const s = props.score ?? 0;
  const max = props.max && props.max > 0 ? props.max : 1;
  const pct = Math.max(0, Math.min(100, (s / max) * 100));
  return (
    <span class="scorebar" aria-hidden="true">
      <span class="scorebar-fill" style={{ width: `${pct}%` }} />
    </span>
  );
}

export function DiffView(props: { diff: string; testid?: string }) {
  const lines = useMemo(() => parseDiff(props.diff), [props.diff]);
  const stats = diffStats(lines);
  return (
    <figure class="diff" data-testid={props.testid ?? "diff"}>
      <figcaption class="diff-stats">
        <span class="diff-add-count">+{stats.added}</span> <span class="diff-del-count">−{stats.removed}</span>
        <span class="sr-only"> lines added and removed</span>
      </figcaption>
      <pre class="diff-body" tabIndex={0} aria-label="Unified diff">
        {lines.map((l, i) => (
          <span key={i} class={`diff-line diff-${l.kind}`}>
            {l.kind === "add" && <span class="sr-only">added: </span>}
            {l.kind === "del" && <span class="sr-only">removed: </span>}
            {l.text || " "}
            {"\n"}
          </span>
        ))}
      </pre>
    </figure>
  );
}

/** Markdown rendered by the safe renderer in lib/markdown.ts (raw HTML is escaped there). */
export function Markdown(props: { source: string; testid?: string; class?: string }) {
  const html = useMemo(() => renderMarkdown(props.source), [props.source]);
  return <div class={"markdown " + (props.class ?? "")} data-testid={props.testid} dangerouslySetInnerHTML={{ __html: html }} />;
}

export function Kbd(props: { children: ComponentChildren }) {
  return <code class="cmd">{props.children}</code>;
}

export function Field(props: {
  label: string;
  id: string;
  hint?: ComponentChildren;
  children: JSX.Element;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <div class="field-hint muted" id={props.id + "-hint"}>
          {props.hint}
        </div>
      )}
    </div>
  );
}

export function KeyValues(props: { rows: [ComponentChildren, ComponentChildren, string?][] }) {
  return (
    <dl class="kv">
      {props.rows.map(([k, v, testid], i) => (
        <div class="kv-row" key={i}>
          <dt>{k}</dt>
          <dd data-testid={testid}>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
