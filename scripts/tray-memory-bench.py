#!/usr/bin/env python3
"""Memory of the desktop app with its window open and closed (run by
scripts/tray-memory-bench.sh, which provides Xvfb and a session bus).

Starts the app on a temporary home (an upstream on a closed local port: configured, never
reached), lets the window load the dashboard, then measures the app and its WebKit child
processes; closes the window (WM_DELETE_WINDOW, as a window manager's close button), measures
again; reopens it with a second launch (the running app shows its window), measures; closes it
again, measures. Per process: PSS and RSS from /proc/PID/smaps_rollup (PSS shares each shared
page among the processes mapping it, so the sum is what the app really costs).

usage: tray-memory-bench.py APP_BINARY [--settle SECONDS]
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLOSE_WINDOW = Path(__file__).resolve().parent.parent / "src-tauri/e2e/close-window.py"
WEB = "WebKitWebProcess"
NETWORK = "WebKitNetworkProcess"


def until(what, fn, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    sys.exit(f"tray-memory-bench: timed out waiting for {what}")


def children_of():
    """{parent pid: [child pids]} for every process."""
    tree = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the ppid follows the last ')'.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def name_of(pid):
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        if argv0:
            return os.path.basename(argv0)
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def memory_kb(pid):
    """(pss, rss, anonymous pss) in kB, or None when the process is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return None
    fields = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
            fields[parts[0][:-1]] = int(parts[1])
    return fields.get("Pss", 0), fields.get("Rss", 0), fields.get("Pss_Anon", 0)


def descendants(pid):
    tree = children_of()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in tree.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def group_of(name):
    # WebKit may start its processes through bwrap (sandbox): grouped by the WebKit binary.
    if name and name.startswith(WEB):
        return WEB
    if name and name.startswith(NETWORK):
        return NETWORK
    return "other"


def measure(app_pid):
    totals = {k: [0, 0, 0] for k in ("app", WEB, NETWORK, "other")}
    counts = {WEB: 0, NETWORK: 0}
    for pid, group in [(app_pid, "app")] + [(c, group_of(name_of(c))) for c in descendants(app_pid)]:
        m = memory_kb(pid)
        if m is None:
            continue
        for i, v in enumerate(m):
            totals[group][i] += v
        if group in counts and name_of(pid) and not name_of(pid).startswith("bwrap"):
            counts[group] += 1
    return totals, counts


def web_processes(app_pid):
    return [c for c in descendants(app_pid) if (name_of(c) or "").startswith(WEB)]


def window_exists():
    return subprocess.run(["xwininfo", "-name", "MetaClaw"], capture_output=True).returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("app")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds to let memory settle before each measurement")
    args = ap.parse_args()
    app = os.path.abspath(args.app)
    if not os.access(app, os.X_OK):
        sys.exit(f"tray-memory-bench: {app} is not an executable")

    home = tempfile.mkdtemp(prefix="metaclaw-membench-")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    Path(home, "config.yaml").write_text(
        f"claw_type: none\nllm:\n  api_base: http://127.0.0.1:9/v1\nproxy:\n  host: 127.0.0.1\n  port: {port}\n"
    )
    env = dict(os.environ, METACLAW_HOME=home, NO_PROXY="127.0.0.1,localhost")
    for k in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]:
        env.pop(k, None)

    rows = []
    proc = subprocess.Popen([app], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        state = Path(home, "daemon.json")
        until("the app's daemon.json", lambda: state.exists() and json.loads(state.read_text()).get("pid") == proc.pid)

        def opened(label):
            until("the window", window_exists)
            until("a WebKit web process", lambda: web_processes(proc.pid))
            time.sleep(args.settle)
            rows.append((label, *measure(proc.pid)))

        def closed(label):
            subprocess.run([sys.executable, str(CLOSE_WINDOW), "MetaClaw"], check=True, capture_output=True)
            until("the window to go", lambda: not window_exists())
            until("the WebKit web process to exit", lambda: not web_processes(proc.pid))
            time.sleep(args.settle)
            rows.append((label, *measure(proc.pid)))

        opened("window open")
        closed("window closed")
        # A second launch hands over to the running app, which opens its window again.
        subprocess.run([app], env=env, check=True, timeout=30, capture_output=True)
        opened("reopened")
        closed("closed again")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        subprocess.run(["rm", "-rf", home])

    mb = lambda kb: f"{kb / 1024:.1f}"  # noqa: E731
    print(f"app: {app}")
    print("PSS in MB (RSS in parentheses); app anon: the app's anonymous PSS (heap, stacks: not")
    print("its binary's code, which a debug build makes large); web/network: WebKit process counts")
    head = f"{'state':<14} {'app':>16} {'app anon':>9} {'WebKitWebProcess':>20} {'WebKitNetworkProc':>20} {'total PSS':>10}  web/network"
    print(head)
    print("-" * len(head))
    for label, t, counts in rows:
        total = sum(v[0] for v in t.values())
        cell = lambda k: f"{mb(t[k][0])} ({mb(t[k][1])})"  # noqa: E731
        print(
            f"{label:<14} {cell('app'):>16} {mb(t['app'][2]):>9} {cell(WEB):>20} {cell(NETWORK):>20}"
            f" {mb(total):>10}  {counts[WEB]}/{counts[NETWORK]}"
        )


if __name__ == "__main__":
    main()
