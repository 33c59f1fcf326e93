"""Process + HTTP helpers for the SDK tests: the mock upstream and the metaclaw proxy."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import anthropic
import httpx
import openai

REPO = Path(__file__).resolve().parents[2]
METACLAW_BIN = Path(os.environ.get("METACLAW_BIN", REPO / "target" / "debug" / "metaclaw"))
MOCK_UPSTREAM_BIN = Path(os.environ.get("MOCK_UPSTREAM_BIN", REPO / "target" / "debug" / "mock-upstream"))

PROXY_KEY = "proxy-key"
UPSTREAM_KEY = "upstream-key"
MODEL_ID = "mock-model"
TIMEOUT_SECONDS = 3
MAX_BODY_BYTES = 1024 * 1024

# Tests talk to 127.0.0.1 only; never through an HTTP proxy from the environment.
for _v in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    os.environ.pop(_v, None)
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def default_reply(user_text: str) -> str:
    """What the mock answers when nothing is scripted."""
    return "mock reply: " + user_text[:40]


def slow_stream_text(events: int) -> str:
    return "".join(f"w{i} " for i in range(events))


def _stop_process(proc: subprocess.Popen, grace: float = 5.0) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


class Mock:
    """The `mock-upstream` binary, driven through its `/_mock/` control API."""

    def __init__(self) -> None:
        if not MOCK_UPSTREAM_BIN.exists():
            raise RuntimeError(
                f"mock upstream binary not found at {MOCK_UPSTREAM_BIN}; "
                "build it with `cargo build -p metaclaw-tests --bin mock-upstream`"
            )
        self.proc = subprocess.Popen(
            [str(MOCK_UPSTREAM_BIN), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on http://127.0.0.1:"):
            _stop_process(self.proc)
            raise RuntimeError(f"mock-upstream did not start: {line!r}")
        self.base = line.removeprefix("listening on ")
        self.port = int(self.base.rsplit(":", 1)[1])
        self.http = httpx.Client(base_url=self.base, timeout=10, trust_env=False)

    @property
    def openai_base(self) -> str:
        return self.base + "/v1"

    def script(self, *behaviours: dict) -> None:
        r = self.http.post("/_mock/script", json=list(behaviours))
        r.raise_for_status()

    def reset(self) -> None:
        self.http.post("/_mock/reset").raise_for_status()

    def requests(self, path: str | None = None) -> list[dict]:
        reqs = self.http.get("/_mock/requests").json()
        return [r for r in reqs if path is None or r["path"] == path]

    def llm_requests(self) -> list[dict]:
        return [r for r in self.requests() if r["path"] in ("/v1/chat/completions", "/v1/messages", "/v1/responses")]

    def stats(self) -> dict:
        return self.http.get("/_mock/stats").json()

    def stop(self) -> None:
        self.http.close()
        _stop_process(self.proc)
        if self.proc.stdout:
            self.proc.stdout.close()


class Proxy:
    """A `metaclaw start --foreground` process with its own METACLAW_HOME."""

    def __init__(self, home: Path, *, provider: str, api_base: str, extra_yaml: str = "") -> None:
        if not METACLAW_BIN.exists():
            raise FileNotFoundError(str(METACLAW_BIN))
        self.home = Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        (self.home / "config.yaml").write_text(
            "mode: skills_only\n"
            f"llm: {{provider: {provider}, model_id: {MODEL_ID}, api_base: \"{api_base}\", "
            f"api_key: {UPSTREAM_KEY}, timeout_seconds: {TIMEOUT_SECONDS}}}\n"
            f"proxy: {{port: {self.port}, api_key: {PROXY_KEY}, max_body_bytes: {MAX_BODY_BYTES}}}\n"
            "skills: {enabled: false}\n"
            "claw_type: none\n" + extra_yaml
        )
        self.log_path = self.home / "proxy.log"
        self._log = open(self.log_path, "wb")
        env = dict(os.environ, METACLAW_HOME=str(self.home), NO_COLOR="1")
        self.proc = subprocess.Popen(
            [str(METACLAW_BIN), "start", "--foreground"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.http = httpx.Client(base_url=self.base, timeout=15, trust_env=False)
        self._wait_healthy()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def _wait_healthy(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"metaclaw exited with {self.proc.returncode} during startup:\n{self.log()}")
            try:
                r = self.http.get("/healthz", timeout=1)
                if r.status_code == 200 and r.json().get("ok") is True:
                    return
                last = f"{r.status_code} {r.text[:200]}"
            except (httpx.HTTPError, ValueError) as e:
                last = repr(e)
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"metaclaw /healthz not ready after {timeout}s (last: {last}):\n{self.log()}")

    @property
    def db_path(self) -> Path:
        return self.home / "metaclaw.db"

    def query(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        if not self.db_path.exists():
            return []
        con = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5)
        con.row_factory = sqlite3.Row
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def wait_rows(self, sql: str, args: tuple = (), *, count: int, timeout: float = 3.0) -> list[sqlite3.Row]:
        """Polls until the query returns at least `count` rows (turns land within ~1 s)."""
        deadline = time.monotonic() + timeout
        rows: list[sqlite3.Row] = []
        while True:
            try:
                rows = self.query(sql, args)
            except sqlite3.OperationalError:
                rows = []
            if len(rows) >= count or time.monotonic() >= deadline:
                return rows
            time.sleep(0.05)

    def turns_for_session(self, session_id: str, *, count: int, timeout: float = 3.0) -> list[sqlite3.Row]:
        return self.wait_rows("SELECT * FROM turns WHERE session_id = ? ORDER BY seq", (session_id,), count=count, timeout=timeout)

    def stop(self) -> None:
        self.http.close()
        _stop_process(self.proc)
        self._log.close()


def user_texts(openai_body: dict) -> list[str]:
    """The user texts in an OpenAI request body (string or text-part content)."""
    out = []
    for m in openai_body.get("messages", []):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            out.append("".join(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text"))
    return out


def loads(s: str | None):
    return None if s is None else json.loads(s)


def make_openai(proxy: Proxy, api_key: str = PROXY_KEY, **kw) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=proxy.base + "/v1",
        api_key=api_key,
        max_retries=0,
        timeout=kw.pop("timeout", 20),
        **kw,
    )


def make_anthropic(proxy: Proxy, api_key: str = PROXY_KEY, **kw) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=proxy.base,
        api_key=api_key,
        max_retries=0,
        timeout=kw.pop("timeout", 20),
        **kw,
    )
