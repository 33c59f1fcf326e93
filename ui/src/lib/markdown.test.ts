import { describe, expect, it } from "vitest";
import { frontmatterHints, isSafeUrl, renderMarkdown, splitFrontmatter } from "./markdown";

describe("renderMarkdown", () => {
  it("renders ordinary markdown", () => {
    const html = renderMarkdown("# Title\n\n1. **Bold** step\n\n`code`");
    expect(html).toContain("<h1");
    expect(html).toContain("<strong>Bold</strong>");
    expect(html).toContain("<code>code</code>");
  });

  it("shows raw HTML as text", () => {
    const html = renderMarkdown('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)">');
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;");
  });

  it("drops unsafe link schemes and never loads images", () => {
    const html = renderMarkdown("[x](javascript:alert(1)) [y](https://example.com) ![i](https://t.example/p.png)");
    expect(html).not.toContain("javascript:");
    expect(html).toContain('href="https://example.com"');
    expect(html).not.toContain("<img");
  });
});

describe("isSafeUrl", () => {
  it("allows http(s), mailto and relative links only", () => {
    expect(isSafeUrl("https://a.b")).toBe(true);
    expect(isSafeUrl("mailto:a@b.c")).toBe(true);
    expect(isSafeUrl("#x")).toBe(true);
    expect(isSafeUrl("docs/x.md")).toBe(true);
    expect(isSafeUrl("JavaScript:alert(1)")).toBe(false);
    expect(isSafeUrl("data:text/html,x")).toBe(false);
    expect(isSafeUrl("//evil.example")).toBe(false);
  });
});

describe("frontmatter", () => {
  const doc = '---\nname: a-skill\ndescription: "Use when x"\ncategory: coding\n---\n\n# Body\n';
  it("splits frontmatter from the body", () => {
    const s = splitFrontmatter(doc);
    expect(s.frontmatter).toContain("name: a-skill");
    expect(s.body.trim()).toBe("# Body");
  });
  it("hints at missing frontmatter, renamed skills and unknown categories", () => {
    expect(frontmatterHints(doc, "a-skill")).toEqual([]);
    expect(frontmatterHints("# no frontmatter")[0]).toMatch(/frontmatter/);
    expect(frontmatterHints(doc, "other").join()).toMatch(/must stay `other`/);
    expect(frontmatterHints(doc.replace("coding", "cooking")).join()).toMatch(/category/);
  });
});
