"""A suite run against a real loopback OpenAI-compatible server, faults included, serial and -n 2."""

from __future__ import annotations

import json

import pytest

import fakeserver
from builders import center_norm, write_suite

KEY_ENV = "GUITEST_E2E_KEY"
SECRET = "sk-e2e-3f9c1d7a5b2e4c6d8e0f"


@pytest.mark.parametrize("mode", [[], ["-n", "2"], ["-n", "2", "--http-client=openai"]], ids=["serial", "xdist", "xdist-openai-client"])
def test_suite_against_endpoint_with_faults(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path, mode) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    monkeypatch.setenv(KEY_ENV, SECRET)

    def answer(split: str, row: int) -> str:
        x, y = center_norm(split, row)
        return f"The element is there.\nAnswer: [{x:.4f}, {y:.4f}]"

    script = {
        "open the file menu": [{"status": 500}, {"status": 503}, {"content": answer("desktop", 0)}],
        "close the dialog": [{"sleep": 3}] * 5,
        "open settings": [{"malformed": True}, {"content": answer("desktop", 2)}],
        "save the document": [{"finish_reason": "length", "content": "Let me think step by step. Answer: [0.2"}],
        "sign in": [{"content": answer("mobile", 1)}],
        # "go back" gets the server's default answer, the screen centre: a miss
    }
    with fakeserver.serve(tmp_path, script=script) as server:
        result = pytester.runpytest_subprocess(
            "suites/tiny",
            "--model=openai:fake-vl",
            f"--base-url={server.base_url}",
            f"--api-key-env={KEY_ENV}",
            "--timeout=0.5",
            "--retries=2",
            "--retry-backoff=0.01",
            "--concurrency=4",
            *mode,
        )
        requests = server.requests()
    assert result.ret == 1, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in report["cases"]}
    assert verdicts == {
        "desktop-windows-text-0": "hit",
        "desktop-windows-icon-1": "error",
        "desktop-macos-icon-2": "hit",
        "desktop-macos-text-3": "truncated",
        "mobile-ios-icon-0": "miss",
        "mobile-android-text-1": "hit",
    }
    error = next(c for c in report["cases"] if c["verdict"] == "error")["error"]
    assert "gave up after 3 tries" in error and "timed out after 0.5 s" in error
    result.stdout.fnmatch_lines(["*desktop-windows-icon-1*error:*gave up after 3 tries*"])
    # every request carried the screenshot as a PNG data URI and the key as a header
    chat = [r for r in requests if r["path"].endswith("/chat/completions")]
    assert len(chat) == 3 + 3 + 2 + 1 + 1 + 1
    assert all(r["image"] and r["image_mime"] == "image/png" and r["auth"] for r in chat)
    assert {tuple(r["image_size"]) for r in chat} == {(400, 300), (640, 400), (300, 600)}
    # the secret appears nowhere the user or CI could see it
    everything = (result.stdout.str() + result.stderr.str()).encode()
    for path in (pytester.path / "reports").rglob("*"):  # reports, earlier runs' copies and the response cache
        if path.is_file():
            everything += path.read_bytes()
    assert SECRET.encode() not in everything
    everything = everything.decode("utf-8", "replace")
    assert f"from ${KEY_ENV} (set)" in everything
    assert report["model"]["settings"]["timeout"] == 0.5 and report["model"]["base_url"] == server.base_url
