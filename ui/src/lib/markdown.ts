// SKILL.md rendering for the editor preview. Untrusted text (skills can come from the evolver
// LLM), so raw HTML is shown as text, links are limited to safe schemes, and images are not
// loaded (they become links), so a preview can't run script or phone home.
import { Marked, type Tokens } from "marked";

const SAFE_URL = /^(https?:|mailto:|#|\/(?!\/)|\.{0,2}\/)/i;

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

export function isSafeUrl(href: string | null | undefined): boolean {
  if (!href) return false;
  const h = href.trim();
  // Relative links without a scheme are fine; anything with a scheme must be allow-listed.
  if (!/^[a-z][a-z0-9+.-]*:/i.test(h)) return !h.startsWith("//");
  return SAFE_URL.test(h);
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    link(this: { parser: { parseInline: (t: Tokens.Generic[]) => string } }, token: Tokens.Link): string {
      const text = this.parser.parseInline(token.tokens);
      if (!isSafeUrl(token.href)) return text;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : "";
      return `<a href="${escapeHtml(token.href)}"${title} target="_blank" rel="noopener noreferrer">${text}</a>`;
    },
    image(token: Tokens.Image): string {
      const alt = escapeHtml(token.text || "image");
      if (!isSafeUrl(token.href)) return `[${alt}]`;
      return `<a href="${escapeHtml(token.href)}" target="_blank" rel="noopener noreferrer">[image: ${alt}]</a>`;
    },
  },
});

/** The categories `metaclaw skills lint` knows (others are a lint warning). */
export const KNOWN_CATEGORIES = [
  "general",
  "coding",
  "debugging",
  "research",
  "data_analysis",
  "communication",
  "security",
  "automation",
  "agentic",
  "productivity",
  "common_mistakes",
];

export interface SplitDoc {
  frontmatter: string | null;
  body: string;
}

/** Splits a leading `---` YAML frontmatter block from the Markdown body. */
export function splitFrontmatter(content: string): SplitDoc {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(content);
  if (!m) return { frontmatter: null, body: content };
  return { frontmatter: m[1], body: content.slice(m[0].length) };
}

export function renderMarkdown(md: string): string {
  return marked.parse(md) as string;
}

/** A flat `key: value` read of the frontmatter's top level (enough for hints). */
export function frontmatterFields(fm: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fm.split(/\r?\n/)) {
    const m = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].replace(/^["']|["']$/g, "").trim();
  }
  return out;
}

/**
 * Quick client-side hints while typing. The daemon is the authority (PUT validates and lints);
 * these only catch the obvious mistakes before a round trip.
 */
export function frontmatterHints(content: string, expectedName?: string): string[] {
  const { frontmatter } = splitFrontmatter(content);
  if (frontmatter === null) return ["SKILL.md must start with a frontmatter block between `---` lines."];
  const f = frontmatterFields(frontmatter);
  const hints: string[] = [];
  if (!f.name) hints.push("The frontmatter needs a `name:`.");
  else if (expectedName && f.name !== expectedName) hints.push(`The name must stay \`${expectedName}\` (found \`${f.name}\`).`);
  if (!("description" in f)) hints.push("The frontmatter needs a `description:`.");
  if (f.category && !KNOWN_CATEGORIES.includes(f.category)) {
    hints.push(`Unknown category \`${f.category}\` (known: ${KNOWN_CATEGORIES.join(", ")}).`);
  }
  return hints;
}
