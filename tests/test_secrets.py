"""Secrets stay out of everything a run writes: the API key, and the password of a base URL with credentials.

Both HTTP clients send the same credentials (HTTP Basic from a URL's user and password, else the bearer key),
and no file the run leaves (reports, earlier runs' copies, the cache, JUnit XML, a DEBUG log file) nor its
terminal output holds a secret in any form.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

import fakeserver
from builders import n_rows, write_suite
from guitest.secrets import Scrubber, redact_urls, scrub_args

PASSWORD = "pw-Zr8qL2vN"
KEY = "sk-secret-Q4mT9wX1"
USER = "alice"


def test_redact_urls_removes_every_userinfo() -> None:
    text = "see http://alice:pw@host:8000/v1 and https://bob@h/x, not mail@example.com"
    assert redact_urls(text) == "see http://host:8000/v1 and https://h/x, not mail@example.com"


def test_redact_urls_hides_query_parameters_named_like_a_secret() -> None:
    text = "ws://farm:3000/chromium?token=s3cr3t&launch=x and wss://svc/?apiKey=k3y#f, http://h/x?q=1&page=2"
    assert redact_urls(text) == "ws://farm:3000/chromium?token=***&launch=x and wss://svc/?apiKey=***#f, http://h/x?q=1&page=2"
    assert redact_urls("token=abc") == "token=abc"  # not a URL


def test_scrub_args_hides_urls_credentials_and_secret_option_values() -> None:
    args = ["suites/x", f"--base-url=http://{USER}:{PASSWORD}@127.0.0.1:9/v1", "--api-key", KEY, f"--token={KEY}", "--api-key-env=MY_KEY", "-k", "icon"]
    shown = scrub_args(args)
    assert shown == ["suites/x", "--base-url=http://127.0.0.1:9/v1", "--api-key", "***", "--token=***", "--api-key-env=MY_KEY", "-k", "icon"]


def test_scrubber_replaces_plain_and_url_quoted_secrets() -> None:
    scrub = Scrubber(["p@ss/word"])
    assert scrub("got p@ss/word and p%40ss%2Fword") == "got *** and ***"


def _every_file(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "suites" not in p.relative_to(root).parts]


def _leaks(data: bytes, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s.encode() in data]


# each credential kind through both clients, each client serial and under xdist (pairwise: four runs, not eight)
COMBINATIONS = [("url", "stdlib", []), ("url", "openai", ["-n", "2"]), ("key", "openai", []), ("key", "stdlib", ["-n", "2"])]


@pytest.mark.parametrize(("where", "client", "mode"), COMBINATIONS, ids=["url-stdlib-serial", "url-openai-xdist", "key-openai-serial", "key-stdlib-xdist"])
def test_no_file_or_output_of_a_run_holds_a_secret(pytester: pytest.Pytester, tmp_path, monkeypatch: pytest.MonkeyPatch, client: str, mode: list[str], where: str) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    secrets = [PASSWORD, token, KEY] if where == "url" else [KEY]
    # one case is refused with an error body that repeats the credentials it received; another's reply echoes them
    # (before: kept verbatim in the JSON, HTML, cache and trajectory)
    script = {
        "close the dialog": [{"status": 401, "echo_key": True}],
        "open the file menu": [{"content": f"My headers were Authorization: Bearer {KEY} / Basic {token} ({USER}:{PASSWORD}). Answer: [0.1, 0.1]"}],
    }
    with fakeserver.serve(tmp_path, script=script) as server:
        url = f"http://{USER}:{PASSWORD}@127.0.0.1:{server.port}/v1" if where == "url" else server.base_url
        result = pytester.runpytest_subprocess(
            "suites/tiny",
            "--model=openai:agent",
            f"--base-url={url}",
            f"--http-client={client}",
            "--retries=0",
            "--timeout=5",
            "--junitxml=junit.xml",
            "--log-file=run.log",
            "--log-file-level=DEBUG",
            "--report-html=out/{suite}.html",
            *mode,
        )
        chats = server.requests()
    assert result.ret == 1, result.stdout.str()  # the refused case is an error
    assert len(chats) == n_rows()
    expected = f"Basic {token}" if where == "url" else f"Bearer {KEY}"
    assert {c["auth_sha256"] for c in chats} == {hashlib.sha256(expected.encode()).hexdigest()}  # both clients alike
    output = (result.stdout.str() + result.stderr.str()).encode()
    assert _leaks(output, secrets) == []
    files = _every_file(pytester.path)
    assert {"junit.xml", "run.log", "tiny.json", "tiny.md", "tiny.html", "guitest-cache.sqlite"} <= {p.name for p in files}
    leaking = {str(p.relative_to(pytester.path)): _leaks(p.read_bytes(), secrets) for p in files}
    assert {k: v for k, v in leaking.items() if v} == {}
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    refused = next(c for c in report["cases"] if c["verdict"] == "error")
    hint = "check the user and password in --base-url" if where == "url" else "check the API key in $OPENAI_API_KEY"
    assert hint in refused["error"] and "***" in refused["error"]
    assert any(a.startswith("--base-url=http://127.0.0.1:") for a in report["run"]["pytest_args"])
    echoed = next(c for c in report["cases"] if c["instruction"] == "open the file menu")
    assert "***" in echoed["response"] and echoed["verdict"] in ("hit", "miss")  # scrubbed, and still read
