import { describe, expect, it } from "vitest";
import { diffStats, parseDiff } from "./diff";

describe("parseDiff", () => {
  it("classifies unified diff lines", () => {
    const lines = parseDiff("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n");
    expect(lines.map((l) => l.kind)).toEqual(["meta", "meta", "hunk", "ctx", "del", "add"]);
    expect(diffStats(lines)).toEqual({ added: 1, removed: 1 });
  });
});
