"""Fixtures: one mock upstream for the run, metaclaw proxies in front of it, SDK clients.

Env: METACLAW_BIN (default <repo>/target/debug/metaclaw), MOCK_UPSTREAM_BIN (default
<repo>/target/debug/mock-upstream). Tests skip only when the metaclaw binary is missing.
"""

from __future__ import annotations

import pytest

from harness import METACLAW_BIN, Mock, Proxy, make_anthropic, make_openai


def _require_metaclaw() -> None:
    if not METACLAW_BIN.exists():
        pytest.skip(f"metaclaw binary not found at {METACLAW_BIN} (build: cargo build -p metaclaw-cli)")


@pytest.fixture(scope="session")
def mock():
    m = Mock()
    yield m
    m.stop()


@pytest.fixture(autouse=True)
def _fresh_mock_script(request):
    """Every test starts with an empty behaviour queue and no recorded requests."""
    if "mock" in request.fixturenames:
        request.getfixturevalue("mock").reset()


def _start_proxy(tmp_path_factory, name: str, **kw) -> Proxy:
    _require_metaclaw()
    return Proxy(tmp_path_factory.mktemp(name), **kw)


@pytest.fixture(scope="session")
def proxy(mock, tmp_path_factory):
    """The proxy in front of the mock's OpenAI-compatible API (provider: custom)."""
    p = _start_proxy(tmp_path_factory, "proxy-openai", provider="custom", api_base=mock.openai_base)
    yield p
    p.stop()


@pytest.fixture(scope="session")
def anthropic_proxy(mock, tmp_path_factory):
    """The proxy in front of the mock's native Anthropic API (provider: anthropic, passthrough)."""
    p = _start_proxy(tmp_path_factory, "proxy-anthropic", provider="anthropic", api_base=mock.base)
    yield p
    p.stop()


@pytest.fixture
def start_proxy(tmp_path_factory):
    """Factory for a proxy private to one test (clean database); stopped at teardown."""
    started: list[Proxy] = []

    def start(**kw) -> Proxy:
        p = _start_proxy(tmp_path_factory, "proxy-private", **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


@pytest.fixture
def oai(proxy):
    c = make_openai(proxy)
    yield c
    c.close()


@pytest.fixture
def claude(proxy):
    """Anthropic SDK against the OpenAI-upstream proxy (translation path)."""
    c = make_anthropic(proxy)
    yield c
    c.close()


@pytest.fixture
def claude_native(anthropic_proxy):
    """Anthropic SDK against the Anthropic-upstream proxy (native passthrough)."""
    c = make_anthropic(anthropic_proxy)
    yield c
    c.close()

