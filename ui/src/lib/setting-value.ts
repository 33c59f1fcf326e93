// Between a settings field's text box and the value PATCH /api/config `set` takes.
import type { SettingField } from "./api-types";

type Shape = Pick<SettingField, "kind" | "value">;

/** What the user typed, as the value to send: numbers as numbers when they parse (else the
 *  text as typed, so the server's message names the problem), lists one item a line. */
export function toValue(f: Shape, text: string): unknown {
  switch (f.kind) {
    case "int":
    case "float": {
      const t = text.trim();
      const n = Number(t);
      return t !== "" && Number.isFinite(n) ? n : t;
    }
    case "list":
      return text
        .split("\n")
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return text;
  }
}

/** The text box's content for the current value; a secret's box starts empty (write-only). */
export function toText(f: Shape): string {
  if (f.kind === "secret") return "";
  if (f.kind === "list") return Array.isArray(f.value) ? (f.value as unknown[]).join("\n") : "";
  if (f.value === null || f.value === undefined) return "";
  return String(f.value);
}
