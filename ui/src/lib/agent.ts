// The agent the dashboard is filtered to ("" = every agent), chosen in the sidebar and kept for
// the session in sessionStorage; pages read it with useAgent() and reload when it changes.
import { useEffect, useState } from "preact/hooks";

const KEY = "metaclaw.agent";
const listeners = new Set<(agent: string) => void>();

export function getAgent(): string {
  try {
    return sessionStorage.getItem(KEY) ?? "";
  } catch {
    return "";
  }
}

export function setAgent(agent: string) {
  try {
    if (agent) sessionStorage.setItem(KEY, agent);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage may be unavailable: the choice still applies to this page */
  }
  for (const fn of listeners) fn(agent);
}

/** The selected agent, or undefined for all agents (ready to pass as a query value). */
export function useAgent(): string | undefined {
  const [agent, set] = useState(getAgent());
  useEffect(() => {
    listeners.add(set);
    return () => void listeners.delete(set);
  }, []);
  return agent || undefined;
}
