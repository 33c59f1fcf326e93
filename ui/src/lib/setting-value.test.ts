import { describe, expect, it } from "vitest";
import { toText, toValue } from "./setting-value";

describe("setting values", () => {
  it("sends numbers as numbers and anything else as typed, for the server to judge", () => {
    expect(toValue({ kind: "int", value: 6 }, " 2 ")).toBe(2);
    expect(toValue({ kind: "float", value: 0.1 }, "1e-5")).toBe(1e-5);
    expect(toValue({ kind: "int", value: 6 }, "many")).toBe("many");
    expect(toValue({ kind: "int", value: 6 }, "")).toBe("");
  });

  it("reads lists one item a line, dropping blank lines", () => {
    expect(toValue({ kind: "list", value: [] }, "a.ics\n\n  b.ics \n")).toEqual(["a.ics", "b.ics"]);
    expect(toText({ kind: "list", value: ["a.ics", "b.ics"] })).toBe("a.ics\nb.ics");
  });

  it("never shows a secret, and shows other values as text", () => {
    expect(toText({ kind: "secret", value: null })).toBe("");
    expect(toText({ kind: "bool", value: true })).toBe("true");
    expect(toText({ kind: "text", value: null })).toBe("");
    expect(toValue({ kind: "secret", value: null }, "tml-abc")).toBe("tml-abc");
  });
});
