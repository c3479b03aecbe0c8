"""``guitest.models.openai_api.OpenAIChat`` through the real ``openai`` client against a real HTTP server.

No mocks: every test starts ``tests/fakeserver.py`` as a subprocess (see :func:`fakeserver.serve`)
and drives its faults with a script. Timeouts and backoffs are kept small so the file runs in seconds.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import time
import traceback
import urllib.request
import uuid

import pytest
from PIL import Image

from guitest.errors import ModelError
from guitest.models.base import Case, Prompt, Reply, Settings
from guitest.models.openai_api import OpenAIChat
from guitest.sample import Sample
from guitest.tasks.grounding import Grounding
from guitest.cost.usage import Usage

try:
    import fakeserver
except ImportError:  # tests/ became a package
    from tests import fakeserver

# A fixed, unusual name (collection must be identical across xdist workers); the secret is random.
KEY_ENV = "GUITEST_TEST_OPENAI_KEY_Q7X2"
SECRET = f"sk-test-{uuid.uuid4().hex}"
MODEL = "fake-vl-7b"
EXPECTED = "Answer: [0.25, 0.75]"
PROMPT = f"Click the OK button. ANSWER={EXPECTED}"
IMAGE_SIZE = (64, 48)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


@pytest.fixture
def case() -> Case:
    sample = Sample(id="s1", image="shot.png", instruction="Click the OK button.", box=(10.0, 10.0, 20.0, 20.0), tags={}, source="test", size=IMAGE_SIZE)
    return Case(sample=sample, original_size=IMAGE_SIZE, truth=(10.0, 10.0, 20.0, 20.0), sent_size=IMAGE_SIZE, task=Grounding())


HTTP = {"client": "openai"}


@pytest.fixture(autouse=True, params=["openai", "stdlib"])
def http_client(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs through both HTTP clients (--http-client): the same requests, the same readings."""
    monkeypatch.setitem(HTTP, "client", request.param)
    return request.param


def make(base_url: str, *, timeout: float = 2.0, retries: int = 3, backoff: float = 0.01, key_env: str = KEY_ENV) -> OpenAIChat:
    settings = Settings(base_url=base_url, timeout=timeout, retries=retries, api_key_env=key_env, http_client=HTTP["client"])
    return OpenAIChat(f"openai:{MODEL}", settings, MODEL, backoff=backoff)


def ask(model: OpenAIChat, case: Case, text: str = PROMPT) -> Reply:
    image = Image.new("RGB", IMAGE_SIZE, "white")
    try:
        return model.generate(Prompt(user=text), model.preprocess(image, case), case)
    finally:
        model.close()


def sent_usage(record: dict) -> Usage:
    """The usage the fake server logged as sent, in guitest's terms (every kind of OpenAI's chat completions)."""
    sent = record["usage"]
    return Usage(
        input_tokens=sent["prompt_tokens"],
        output_tokens=sent["completion_tokens"],
        cache_read_tokens=sent["prompt_tokens_details"]["cached_tokens"],
        reasoning_tokens=sent["completion_tokens_details"]["reasoning_tokens"],
    )


def fail(model: OpenAIChat, case: Case, text: str = PROMPT) -> ModelError:
    with pytest.raises(ModelError) as info:
        ask(model, case, text)
    return info.value


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------- answers


def test_plain_answer(tmp_path, case):
    with fakeserver.serve(tmp_path) as server:
        reply = ask(make(server.base_url), case)
        log = server.requests()
    assert reply == Reply(text=EXPECTED, finish_reason="stop", attempts=1, usage=sent_usage(log[-1]))
    assert len(log) == 1
    request = log[0]
    assert request["method"] == "POST" and request["path"] == "/v1/chat/completions"
    assert request["model"] == MODEL
    assert request["roles"] == ["user"]
    assert request["texts"] == [PROMPT]
    assert request["image"] is True
    assert request["image_mime"] == "image/png"
    assert request["image_size"] == list(IMAGE_SIZE)
    assert request["auth"] is True
    assert request["params"]["temperature"] == 0.0 and request["params"]["max_tokens"] == 512
    assert request["fault"] is None


def test_default_answer_and_system_prompt(tmp_path, case):
    with fakeserver.serve(tmp_path) as server:
        model = make(server.base_url)
        image = Image.new("RGB", IMAGE_SIZE)
        reply = model.generate(Prompt(user="Click OK.", system="You are a GUI agent."), model.preprocess(image, case), case)
        model.close()
        (request,) = server.requests()
    assert reply.text == fakeserver.DEFAULT_ANSWER
    assert request["roles"] == ["system", "user"]
    assert request["texts"] == ["You are a GUI agent.", "Click OK."]


def test_finish_reason_length_passes_through(tmp_path, case):
    script = {"*": [{"finish_reason": "length", "content": "Answer: [0.5"}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        reply = ask(make(server.base_url), case)
        log = server.requests()
    assert len(log) == 1
    assert reply == Reply(text="Answer: [0.5", finish_reason="length", attempts=1, usage=sent_usage(log[0]))


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        (None, None),  # a server that sends no usage: unknown, never zero
        ({"prompt_tokens": 1400, "completion_tokens": 12, "total_tokens": 1412}, Usage(input_tokens=1400, output_tokens=12)),  # TGI, and vLLM by default
        ({"prompt_tokens": 9, "completion_tokens": 3, "prompt_tokens_details": None}, Usage(input_tokens=9, output_tokens=3)),  # vLLM's details when not enabled
        ({"prompt_tokens": 9, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0}}, Usage(input_tokens=9, output_tokens=3, cache_read_tokens=0)),
        ({"prompt_tokens": "many", "completion_tokens": -1}, Usage(set_aside=("prompt_tokens 'many'", "completion_tokens -1"))),  # not counts: unknown, named
        # SGLang (sgl-project/sglang python/sglang/srt/entrypoints/openai/protocol.py, UsageInfo at 004c82e): reasoning_tokens beside the counts
        ({"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12, "prompt_tokens_details": None, "reasoning_tokens": 2}, Usage(input_tokens=9, output_tokens=3, reasoning_tokens=2)),
    ],
    ids=["none", "plain", "null-details", "zero-cached", "not-numbers", "sglang"],
)
def test_usage_as_each_server_sends_it(tmp_path, case, sent, read):
    with fakeserver.serve(tmp_path, script={"*": [{"usage": sent}]}) as server:
        reply = ask(make(server.base_url), case)
    assert reply.text == EXPECTED and reply.usage == read


def test_models_endpoint(tmp_path):
    with fakeserver.serve(tmp_path) as server:
        model = make(server.base_url)
        ids = [item.id for item in model.client.models.list()]
        model.close()
        assert server.all_requests()[0]["path"] == "/v1/models"
    assert ids == ["fake-model"]


# --------------------------------------------------------------------------- retries


def test_500_twice_then_success(tmp_path, case):
    script = {"*": [{"status": 500}, {"status": 500}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        reply = ask(make(server.base_url, retries=3), case)
        log = server.requests()
    assert dataclasses.replace(reply, failed=()) == Reply(text=EXPECTED, finish_reason="stop", attempts=3, usage=sent_usage(log[-1]))  # the call that answered
    assert [r["fault"] for r in log] == [{"status": 500}, {"status": 500}, None]
    assert [f.why for f in reply.failed] == ["server_error", "server_error"] and all(f.usage is None and f.seconds >= 0 for f in reply.failed)


def test_always_500_gives_up(tmp_path, case):
    script = {"*": [{"status": 500}] * 10}
    with fakeserver.serve(tmp_path, script=script) as server:
        error = fail(make(server.base_url, retries=2), case)
        assert len(server.requests()) == 3
    message = str(error)
    assert "gave up after 3 tries" in message
    assert "HTTP 500" in message
    assert MODEL in message
    assert [f.why for f in error.failed] == ["server_error"] * 3  # every try is counted, none as an answer


@pytest.mark.parametrize("status", [408, 409, 429, 502, 503])
def test_retryable_statuses(tmp_path, case, status):
    with fakeserver.serve(tmp_path, script={"*": [{"status": status}]}) as server:
        reply = ask(make(server.base_url, retries=1), case)
        assert len(server.requests()) == 2
    assert reply.text == EXPECTED and reply.attempts == 2


def test_retry_after_is_honoured(tmp_path, case):
    # With backoff=60 the adapter's own delay would be 30..60 s; Retry-After: 0 must win (a bound far from both, so a
    # busy machine does not decide the test).
    script = {"*": [{"status": 429, "retry_after": 0}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        start = time.monotonic()
        reply = ask(make(server.base_url, retries=1, backoff=60.0), case)
        elapsed = time.monotonic() - start
    assert reply.attempts == 2
    assert elapsed < 20.0


def test_timeout_then_success(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"sleep": 30}]}) as server:
        start = time.monotonic()
        reply = ask(make(server.base_url, timeout=0.5, retries=2), case)
        elapsed = time.monotonic() - start
        log = server.requests()
    assert len(log) == 2
    assert dataclasses.replace(reply, failed=()) == Reply(text=EXPECTED, finish_reason="stop", attempts=2, usage=sent_usage(log[-1]))
    assert [f.why for f in reply.failed] == ["timeout"] and reply.failed[0].seconds >= 0.5
    assert 0.5 <= elapsed < 20  # the client gave up on the slow request (30 s) instead of waiting for it


def test_timeouts_give_up(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"sleep": 2}, {"sleep": 2}]}) as server:
        error = fail(make(server.base_url, timeout=0.5, retries=1), case)
        assert len(server.requests()) == 2
    assert "gave up after 2 tries" in str(error)
    assert "timed out after 0.5 s" in str(error)


def test_latency_below_timeout_is_fine(tmp_path, case):
    with fakeserver.serve(tmp_path, latency=0.2) as server:
        reply = ask(make(server.base_url, timeout=1.0, retries=0), case)
    assert reply.attempts == 1 and reply.text == EXPECTED


def test_malformed_json_then_success(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"malformed": True}]}) as server:
        reply = ask(make(server.base_url), case)
        assert len(server.requests()) == 2
    assert reply.text == EXPECTED and reply.attempts == 2


def test_no_choices_then_success(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"no_choices": True}]}) as server:
        reply = ask(make(server.base_url), case)
        assert len(server.requests()) == 2
    assert reply.text == EXPECTED and reply.attempts == 2


def test_always_malformed_gives_up(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"malformed": True}] * 3}) as server:
        error = fail(make(server.base_url, retries=2), case)
    assert "gave up after 3 tries" in str(error)
    assert "malformed reply" in str(error)


def test_dropped_connection_then_success(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"drop": True}]}) as server:
        reply = ask(make(server.base_url), case)
        assert len(server.requests()) == 2
    assert reply.text == EXPECTED and reply.attempts == 2


def test_failed_calls_are_counted_apart_by_kind_with_what_they_reported(tmp_path, case):
    # a 5xx, an empty reply the server generated and billed (its usage says so), an unreadable body, a reply cut in its
    # middle, a dropped connection: each a failed call of its kind, none in the answer's usage
    billed = {"prompt_tokens": 900, "completion_tokens": 7}
    script = {"*": [{"status": 503}, {"content": None, "usage": billed}, {"malformed": True}, {"cut": 40}, {"drop": True}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        reply = ask(make(server.base_url, retries=5), case)
        log = server.requests()
    assert [f.why for f in reply.failed] == ["server_error", "empty", "malformed", "cut", "connection"]
    assert [f.usage for f in reply.failed] == [None, Usage(input_tokens=900, output_tokens=7), None, None, None]
    assert reply.text == EXPECTED and reply.attempts == 6 and reply.usage == sent_usage(log[-1])


MALFORMED_BODIES = {
    "top-level list": [1, 2],
    "error object with 200": {"error": {"message": "upstream overloaded"}},
    "content parts instead of text": {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}]}}]},
}
ODD_BODIES = {
    "choice is a string": {"choices": ["x"]},
    "choices is a string": {"choices": "abc"},
    "choice without message": {"choices": [{"index": 0, "finish_reason": "stop"}]},
}


@pytest.mark.parametrize(
    "body",
    [pytest.param(body, id=name) for name, body in MALFORMED_BODIES.items()] + [pytest.param(body, id=name) for name, body in ODD_BODIES.items()],
)
def test_malformed_bodies_are_retried(tmp_path, case, body):
    with fakeserver.serve(tmp_path, script={"*": [{"body": body}]}) as server:
        reply = ask(make(server.base_url), case)
        assert len(server.requests()) == 2
    assert reply.text == EXPECTED and reply.attempts == 2


# --------------------------------------------------------------------------- failing at once


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (401, f"check the API key in ${KEY_ENV}"),
        (403, f"check the API key in ${KEY_ENV}"),
        (404, f"model '{MODEL}'"),
        (400, "the endpoint rejected the request"),
    ],
    ids=["401", "403", "404", "400"],
)
def test_client_errors_fail_at_once(tmp_path, case, status, hint):
    with fakeserver.serve(tmp_path, script={"*": [{"status": status}] * 5}) as server:
        error = fail(make(server.base_url, retries=3), case)
        assert len(server.requests()) == 1
    assert f"HTTP {status}" in str(error)
    assert hint in str(error)


def test_401_names_the_env_var(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"status": 401}]}) as server:
        error = fail(make(server.base_url, retries=3), case)
        assert len(server.requests()) == 1
    assert KEY_ENV in str(error)
    assert "--api-key-env" in str(error)
    assert [f.why for f in error.failed] == ["http_error"]


def test_dead_port_cannot_connect(case):
    port = free_port()
    start = time.monotonic()
    error = fail(make(f"http://127.0.0.1:{port}/v1", retries=2, timeout=60), case)
    assert time.monotonic() - start < 30  # refused at once, three times: never a timeout's wait (60 s each)
    message = str(error)
    assert "gave up after 3 tries" in message
    assert "cannot connect" in message
    assert f"127.0.0.1:{port}" in message


# --------------------------------------------------------------------------- secrets


def _shown(error: BaseException) -> str:
    """Everything a user could see of an exception: its message and the printed traceback."""
    return str(error) + repr(error) + "".join(traceback.format_exception(type(error), error, error.__traceback__))


def test_api_key_is_sent_but_never_shown(tmp_path, case):
    script = {
        "<echo-500>": [{"status": 500, "echo_key": True}] * 5,
        "<echo-401>": [{"status": 401, "echo_key": True}],
        "<echo-429>": [{"status": 429, "echo_key": True, "message": "x" * 257}] * 5,
        "<malformed>": [{"malformed": True}] * 5,
    }
    shown = []
    with fakeserver.serve(tmp_path, script=script) as server:
        for tag in ("<echo-500>", "<echo-401>", "<echo-429>", "<malformed>"):
            shown.append(_shown(fail(make(server.base_url, retries=1), case, f"{tag} {PROMPT}")))
        model = make(server.base_url)
        described = json.dumps(model.describe())
        model.close()
        log = server.requests()
        raw_log = server.log_path.read_text(encoding="utf-8")
    # the server did receive the key (and echoed it back in its error messages)
    assert log and all(request["auth"] is True for request in log)
    assert "***" in shown[0] and "***" in shown[1]
    for text in shown:
        assert SECRET not in text
    assert SECRET not in described
    assert f"${KEY_ENV} (set)" in described
    assert SECRET not in raw_log  # the fake server never logs it either


def test_missing_key_is_reported_as_not_set(tmp_path, case, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    with fakeserver.serve(tmp_path) as server:
        model = make(server.base_url)
        assert f"${KEY_ENV} (not set)" in json.dumps(model.describe())
        reply = ask(model, case)
    assert reply.text == EXPECTED


def test_describe_redacts_credentials_in_base_url():
    model = make("http://alice:hunter2@127.0.0.1:9/v1")
    info = model.describe()
    model.close()
    assert info["base_url"] == "http://127.0.0.1:9/v1"
    assert SECRET not in json.dumps(info)


def test_describe_never_contains_base_url_password():
    model = make("http://alice:hunter2@127.0.0.1:9/v1")
    described = json.dumps(model.describe())
    model.close()
    assert "hunter2" not in described


# --------------------------------------------------------------------------- the fake server itself


def test_server_process_exits_when_context_closes(tmp_path):
    with fakeserver.serve(tmp_path) as server:
        process = server.process
        assert process.poll() is None
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
            assert json.load(response)["object"] == "list"
        port = server.port
    assert process.poll() is not None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_server_exits_by_itself_after_max_seconds(tmp_path):
    with fakeserver.serve(tmp_path, max_seconds=0.5) as server:
        assert server.process.wait(timeout=10) == 0


def test_script_keys_are_matched_in_order_and_consumed(tmp_path, case):
    script = {"<slow>": [{"status": 500}], "*": [{"content": "Answer: [0.9, 0.9]"}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        first = ask(make(server.base_url), case, f"<slow> {PROMPT}")  # 500 (key <slow>), then normal
        second = ask(make(server.base_url), case)  # "*": fixed content
        third = ask(make(server.base_url), case)  # "*" exhausted: normal
        keys = [request["key"] for request in server.requests()]
    assert (first.text, first.attempts) == (EXPECTED, 2)
    assert second.text == "Answer: [0.9, 0.9]"
    assert third.text == EXPECTED
    assert keys == ["<slow>", "<slow>", "*", "*"]


def test_bad_script_fails_with_server_stderr(tmp_path):
    with pytest.raises(RuntimeError, match="script must be a JSON object"):
        with fakeserver.serve(tmp_path, script={"*": "not a list"}):
            pass


def test_screenshot_at_its_own_size_is_sent_as_its_file(tmp_path, case, monkeypatch):
    from guitest.images import open_image

    path = tmp_path / "shot.png"
    Image.new("RGB", IMAGE_SIZE, "white").save(path)
    model = make("http://127.0.0.1:9/v1")
    original = path.read_bytes()
    with open_image(str(path)) as image:
        loads = []
        monkeypatch.setattr(image, "load", lambda: loads.append(1))
        path.unlink()  # the file was read once, when it was opened: sending it needs no second read
        sent = model.preprocess(image, case)
        assert sent.data == original and sent.mime == "image/png" and sent.image is None
        assert loads == []  # never decoded
    path.write_bytes(original)
    # a resize decodes and encodes once instead
    with open_image(str(path)) as image:
        sent = model.preprocess(image, dataclasses.replace(case, sent_size=(32, 24)))
        assert sent.size == (32, 24) and sent.data != path.read_bytes() and sent.image is not None
    model.close()
    # so does a file over --max-image-bytes
    small = OpenAIChat(f"openai:{MODEL}", Settings(base_url="http://127.0.0.1:9/v1", max_image_bytes=10, api_key_env=KEY_ENV), MODEL)
    with open_image(str(path)) as image:
        assert small.preprocess(image, case).mime == "image/jpeg"
    small.close()


def test_a_file_that_is_not_an_image_is_named_in_the_error(tmp_path):
    from guitest.images import open_image

    path = tmp_path / "notes.png"
    path.write_text("not a picture")
    with pytest.raises(OSError, match=r"cannot identify image file '.*notes\.png'"):
        open_image(str(path))


def test_organization_and_project_from_the_environment_are_sent(tmp_path, case, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-guitest")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-guitest")
    with fakeserver.serve(tmp_path) as server:
        assert ask(make(server.base_url), case).text == EXPECTED
        log = server.requests()
    assert [r["openai_headers"] for r in log] == [{"openai-organization": "org-guitest", "openai-project": "proj-guitest"}]


@pytest.mark.parametrize("mode, as_is", [("P", True), ("LA", True), ("RGBA", True), ("I;16", False)])
def test_palette_screenshots_go_as_their_file_and_16_bit_ones_are_converted(tmp_path, case, mode, as_is):
    from guitest.images import open_image

    path = tmp_path / "shot.png"
    Image.new("RGB", IMAGE_SIZE, "white").convert("L" if mode == "I;16" else mode).convert(mode).save(path)
    model = make("http://127.0.0.1:9/v1")
    with open_image(str(path)) as image:
        assert image.mode == mode
        sent = model.preprocess(image, case)
    model.close()
    assert (sent.data == path.read_bytes()) is as_is
    assert sent.mime == "image/png" and sent.size == IMAGE_SIZE


# --------------------------------------------------------------------------- empty replies and tool calls


@pytest.mark.parametrize("content", [None, "", "  \n"], ids=["null", "empty", "blank"])
def test_an_empty_reply_is_an_endpoint_fault_retried_then_an_error(tmp_path, case, content):
    script = {"*": [{"content": content}] * 3}
    with fakeserver.serve(tmp_path, script=script) as server:
        error = fail(make(server.base_url, retries=2), case)
        assert len(server.requests()) == 3
    assert "empty reply: no text and no tool calls (finish_reason 'stop')" in str(error)


def test_an_empty_reply_is_asked_again_and_the_next_one_counts(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"content": None}]}) as server:
        reply = ask(make(server.base_url, retries=1), case)
        assert len(server.requests()) == 2
    assert reply.text == EXPECTED and reply.attempts == 2


def test_an_empty_reply_cut_off_by_the_token_limit_is_a_truncated_reply_not_a_fault(tmp_path, case):
    with fakeserver.serve(tmp_path, script={"*": [{"content": None, "finish_reason": "length"}]}) as server:
        reply = ask(make(server.base_url, retries=2), case)
        assert len(server.requests()) == 1
    assert reply.text == "" and reply.finish_reason == "length"


def _tool_call_body(content):
    return {
        "id": "chatcmpl-tools",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "computer_use", "arguments": json.dumps({"action": "left_click", "coordinate": [12, 34]})}}],
                },
            }
        ],
    }


@pytest.mark.parametrize("content", [None, "I will click it."], ids=["null", "with-text"])
def test_tool_calls_with_or_without_text_are_read_as_tool_call_text(tmp_path, case, content):
    """vLLM with a tool parser on returns Qwen's call in ``tool_calls`` and content null: the reply is the call."""
    from guitest.answers.region import parse_answer
    from guitest.profiles import PROFILES

    with fakeserver.serve(tmp_path, script={"*": [{"body": _tool_call_body(content)}]}) as server:
        reply = ask(make(server.base_url, retries=0), case)
    call = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [12, 34]}}\n</tool_call>'
    assert reply.text == (f"{content}\n{call}" if content else call)
    assert reply.finish_reason == "tool_calls"
    parsed = parse_answer(reply.text, PROFILES["qwen2.5-vl"].styles)
    assert parsed is not None and (parsed.x, parsed.y) == (12.0, 34.0)
