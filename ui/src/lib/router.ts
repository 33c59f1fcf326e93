// Hash router: #/skills/foo → { page: "skills", params: ["foo"] }. Hash routes work the same
// under the daemon's `/` and inside the tray app.
import { useEffect, useState } from "preact/hooks";

export interface Route {
  page: string;
  params: string[];
}

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#\/?/, "").split("?")[0];
  const parts = path.split("/").filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return { page: parts[0] || "overview", params: parts.slice(1) };
}

export function href(...parts: (string | number)[]): string {
  return "#/" + parts.map((p) => encodeURIComponent(String(p))).join("/");
}

export function navigate(...parts: (string | number)[]) {
  location.hash = href(...parts);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const fn = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", fn);
    return () => removeEventListener("hashchange", fn);
  }, []);
  return route;
}
