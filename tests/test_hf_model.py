"""``hf:`` adapter: tiny random LLaVA and Qwen2-VL checkpoints built offline, run through the real path.

The verdicts of random models are meaningless; what is tested is the path: chat template,
image sizing (the model gets the recorded sent size), generation settings, batching,
finish reasons, decoding, errors, and a suite run end to end through ``--model=hf:FOLDER``.
Skipped when torch or transformers (5.x) is missing, unless GUITEST_REQUIRE_HF is set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REQUIRE = bool(os.environ.get("GUITEST_REQUIRE_HF"))
try:
    import torch
    import transformers
except ImportError as exc:
    if REQUIRE:
        pytest.fail(f"GUITEST_REQUIRE_HF is set but the hf tests cannot run: {exc} (pip install torch==2.13.0 'transformers>=5.24')", pytrace=False)
    pytest.skip(f"the hf adapter needs torch and transformers ({exc}); set GUITEST_REQUIRE_HF=1 to make this a failure", allow_module_level=True)
if int(transformers.__version__.split(".")[0]) < 5:
    if REQUIRE:
        pytest.fail(f"GUITEST_REQUIRE_HF is set but transformers {transformers.__version__} is older than 5", pytrace=False)
    pytest.skip(f"the tiny test checkpoints need transformers 5 (found {transformers.__version__})", allow_module_level=True)

import hf_tiny  # noqa: E402
from builders import write_suite  # noqa: E402

from guitest import profiles  # noqa: E402
from guitest.run.case import run_case  # noqa: E402
from guitest.errors import ModelError  # noqa: E402
from guitest.formats import read_suite_samples  # noqa: E402
from guitest.models.base import Settings  # noqa: E402
from guitest.models.hf import HFModel  # noqa: E402
from guitest.suite import load_suite  # noqa: E402
from guitest.cost.usage import Usage  # noqa: E402

VERDICTS = {"hit", "miss", "unparsed", "refused", "truncated"}


@dataclass(frozen=True)
class HFSettings(Settings):
    """Settings with the hf options, whether or not the base Settings has them yet."""

    device: str = "cpu"
    dtype: str = "auto"
    batch_size: int = 1


@pytest.fixture(scope="module")
def llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_tiny.build_llava(tmp_path_factory.mktemp("hf") / "tiny-llava")


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_tiny.build_qwen2_vl(tmp_path_factory.mktemp("hf") / "tiny-qwen2-vl")


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    folder = write_suite(tmp_path_factory.mktemp("suite") / "tiny")
    return read_suite_samples(load_suite(folder / "suite.yaml"), str(folder / "data"))


class Spy:
    """Stands in for the loaded processor: records the text and the PIL images it is called with."""

    def __init__(self, processor: Any) -> None:
        self._processor = processor
        self.calls: list[dict[str, Any]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append({"text": list(kwargs["text"]), "sizes": [im.size for im in kwargs["images"]], "kwargs": {k: v for k, v in kwargs.items() if k not in ("text", "images")}})
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


def spy_on(model: HFModel) -> tuple[Spy, list[dict[str, Any]]]:
    """Load ``model`` and record its processor calls and its ``generate`` calls (the tensors the network gets)."""
    processor, network = model.load()
    spy = Spy(processor)
    model.processor = spy
    calls: list[dict[str, Any]] = []
    real = network.generate

    def generate(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(**kwargs)

    network.generate = generate
    return spy, calls


def test_llava_cases_through_the_whole_path(llava: Path, samples: list[Any]) -> None:
    model = HFModel(f"hf:{llava}", HFSettings(max_tokens=8), str(llava), profiles.get("generic"), "test")
    spy, calls = spy_on(model)
    results = [run_case(s, model) for s in samples[:3]]
    for result in results:
        assert result["verdict"] in VERDICTS, result
        assert isinstance(result["response"], str) and result["finish_reason"] in ("stop", "length")
    # the processor got the image at the recorded sent size, and the chat-templated prompt (system + user + image token)
    assert [c["sizes"] for c in spy.calls] == [[tuple(r["sent_size"])] for r in results]
    assert [tuple(r["sent_size"]) for r in results] == [(400, 300), (400, 300), (640, 400)]
    assert all("<image>" in c["text"][0] and "Find the UI element" in c["text"][0] and c["text"][0].endswith("<|im_start|>assistant\n") for c in spy.calls)
    # the network got pixels (CLIP's fixed 28x28 input) and greedy settings
    assert len(calls) == 3 and all(tuple(c["pixel_values"].shape) == (1, 3, 28, 28) for c in calls)
    config = calls[0]["generation_config"]
    assert config.max_new_tokens == 8 and config.do_sample is False
    info = model.describe()
    assert info["architecture"] == "LlavaForConditionalGeneration" and info["device"] == "cpu" and info["path"] == str(llava)
    assert "fixed resolution" in info["image_input"] and info["dtype"].startswith("float32")
    assert json.dumps(info)  # plain builtins for the report


def test_qwen2_vl_sees_the_recorded_sent_size(qwen: Path, samples: list[Any]) -> None:
    # qwen2.5-vl profile: smart_resize sizing, pixel answers; qwen2-vl profile: images "as is", snapped to the 28-pixel grid
    for name, expected in (("qwen2.5-vl", [(392, 308), (644, 392)]), ("qwen2-vl", [(392, 308), (644, 392)])):
        model = HFModel(f"hf:{qwen}", HFSettings(max_tokens=8), str(qwen), profiles.get(name), "test")
        spy, calls = spy_on(model)
        results = [run_case(s, model) for s in (samples[0], samples[2])]
        assert [tuple(r["sent_size"]) for r in results] == expected
        for result, call, processed in zip(results, calls, spy.calls, strict=True):
            assert result["verdict"] in VERDICTS and isinstance(result["response"], str), result
            assert processed["sizes"] == [tuple(result["sent_size"])]
            # what the vision tower gets: a (t, h, w) grid of 14-pixel patches covering exactly the sent size
            t, h, w = call["image_grid_thw"][0].tolist()
            assert (w * 14, h * 14) == tuple(result["sent_size"]) and t == 1
            assert processed["kwargs"]["size"] == {"shortest_edge": w * h * 196, "longest_edge": w * h * 196}
        info = model.describe()
        assert "dynamic resolution" in info["image_input"]
        # without torchvision, AutoProcessor cannot build Qwen2VLProcessor (its video processor needs it): rebuilt image-only
        if importlib.util.find_spec("torchvision") is None:
            assert type(spy._processor).__name__ == "ImageOnlyQwen2VLProcessor"
    # the Qwen2.5-VL system prompt (tool schema with the sent size) went through the chat template
    assert "<|im_start|>system" not in spy.calls[0]["text"][0]  # the qwen2-vl profile has none
    model = HFModel(f"hf:{qwen}", HFSettings(max_tokens=4), str(qwen), profiles.get("qwen2.5-vl"), "test")
    spy, _ = spy_on(model)
    run_case(samples[0], model)
    text = spy.calls[0]["text"][0]
    assert text.startswith("<|im_start|>system\n") and "resolution is 392x308" in text and "<|vision_start|><|image_pad|><|vision_end|>" in text


def test_batch_of_two_threads_is_one_generate_call(qwen: Path, samples: list[Any]) -> None:
    model = HFModel(f"hf:{qwen}", HFSettings(max_tokens=6, batch_size=2), str(qwen), profiles.get("qwen2-vl"), "test", batch_wait=5.0)
    spy, calls = spy_on(model)
    results: dict[int, dict[str, Any]] = {}
    chosen = (samples[0], samples[4])  # 400x300 and 300x600 screenshots: different image token counts, so padding

    def run(i: int) -> None:
        results[i] = run_case(chosen[i], model)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    model.close()
    assert len(calls) == 1 and len(spy.calls) == 1, "two concurrent cases must share one generate call"
    assert all(r["verdict"] in VERDICTS and isinstance(r["response"], str) for r in results.values()), results
    ids, mask = calls[0]["input_ids"], calls[0]["attention_mask"]
    assert ids.shape[0] == 2 and calls[0]["image_grid_thw"].shape[0] == 2
    assert mask[:, -1].tolist() == [1, 1] and 0 in mask[:, 0].tolist(), "left padding: the shorter row is padded at the start"
    assert sorted(tuple(s) for s in spy.calls[0]["sizes"]) == sorted(tuple(r["sent_size"]) for r in results.values())
    # each case's input tokens are its own row's, the padding left out and the image tokens in (two sizes: two counts)
    rows = sorted(int(n) for n in mask.sum(dim=1).tolist())
    assert sorted(r["usage"]["input_tokens"] for r in results.values()) == rows and rows[0] != rows[1]
    assert all(1 <= r["usage"]["output_tokens"] <= 6 and r["usage"]["calls"] == 1 for r in results.values())


def test_finish_reason_length_and_stop(llava: Path, samples: list[Any]) -> None:
    model = HFModel(f"hf:{llava}", HFSettings(max_tokens=2), str(llava), profiles.get("generic"), "test")
    result = run_case(samples[0], model)
    assert result["finish_reason"] == "length" and result["verdict"] == "truncated"
    # a model that can only say EOS stops at once: an empty reply, read by the parser as no answer
    _, network = model.load()
    eos = model.processor.tokenizer.eos_token_id
    network.generation_config.suppress_tokens = [i for i in range(network.config.text_config.vocab_size) if i != eos]
    result = run_case(samples[0], model)
    assert result["finish_reason"] == "stop" and result["response"] == "" and result["verdict"] == "unparsed"


def test_decoding_keeps_box_tokens_and_drops_eos_and_pad(llava: Path) -> None:
    model = HFModel(f"hf:{llava}", HFSettings(), str(llava))
    processor, _ = model.load()
    tok = processor.tokenizer
    answer = tok.convert_tokens_to_ids(["<|box_start|>", "(", "1", ",", "2", ")", "<|box_end|>"])
    stops, pads = {tok.eos_token_id}, {tok.pad_token_id}
    reply = model._reply([*answer, tok.eos_token_id, tok.pad_token_id, tok.pad_token_id], stops, pads, 10, tok, 57)
    assert reply.finish_reason == "stop" and reply.text.replace(" ", "") == "<|box_start|>(1,2)<|box_end|>"
    assert reply.usage == Usage(input_tokens=57, output_tokens=len(answer) + 1)  # the answer and its stop; not the padding after it
    reply = model._reply([tok.pad_token_id, *answer], stops, pads, 8, tok, 57)
    assert reply.finish_reason == "length" and "<|endoftext|>" not in reply.text


def test_seeded_sampling_repeats_and_is_not_batched(qwen: Path, samples: list[Any]) -> None:
    settings = HFSettings(max_tokens=6, temperature=1.5, seed=7, batch_size=4)
    model = HFModel(f"hf:{qwen}", settings, str(qwen), profiles.get("qwen2-vl"), "test")
    _, calls = spy_on(model)
    first, second = run_case(samples[0], model), run_case(samples[0], model)
    assert first["response"] == second["response"] and calls[0]["generation_config"].do_sample is True
    assert model._batcher is None, "seeded sampling runs unbatched, so replies do not depend on batch composition"
    assert HFModel(f"hf:{qwen}", settings, str(qwen)).generation_settings()["dtype"] == "auto"


def test_errors_are_actionable(tmp_path: Path, llava: Path, samples: list[Any]) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        HFModel("hf:/no/such/model", HFSettings(), "/no/such/model")
    with pytest.raises(ModelError, match="--dtype=int3"):
        HFModel(f"hf:{llava}", HFSettings(dtype="int3"), str(llava))
    if not torch.cuda.is_available():
        with pytest.raises(ModelError, match="no CUDA device; use --device=cpu"):
            HFModel(f"hf:{llava}", HFSettings(device="cuda"), str(llava))
    # a text-only checkpoint: an unsupported architecture, said once per case, no traceback
    text_only = tmp_path / "text-only"
    tok = hf_tiny.tokenizer()
    tok.save_pretrained(text_only)
    transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**hf_tiny._text_config(len(tok)))).save_pretrained(text_only)
    model = HFModel(f"hf:{text_only}", HFSettings(max_tokens=4), str(text_only))
    result = run_case(samples[0], model)
    assert result["verdict"] == "error" and "unsupported architecture Qwen2ForCausalLM" in result["error"]
    # out of memory during generation: a ModelError that says what to lower
    model = HFModel(f"hf:{llava}", HFSettings(max_tokens=4), str(llava))
    _, network = model.load()

    def oom(**kwargs: Any) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    network.generate = oom
    result = run_case(samples[0], model)
    assert result["verdict"] == "error" and "out of memory on cpu" in result["error"] and "--batch-size" in result["error"]


@pytest.mark.parametrize("which", ["llava", "qwen"])
def test_suite_end_to_end(pytester: pytest.Pytester, request: pytest.FixtureRequest, which: str) -> None:
    folder = request.getfixturevalue(which)
    write_suite(pytester.path / "suites" / "tiny")
    result = pytester.runpytest_subprocess("suites/tiny", f"--model=hf:{folder}", "--max-tokens=8", "-p", "no:cacheprovider")
    output = result.stdout.str() + result.stderr.str()
    if "unknown model" in output and "hf:" in output:
        pytest.skip("--model=hf: is not registered in guitest.models yet")
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert result.ret == 0, output
    assert report["n_results"] == 6 and {c["verdict"] for c in report["cases"]} <= VERDICTS
    assert all(isinstance(c["response"], str) for c in report["cases"])
    assert report["model"]["adapter"] == "HFModel" and report["model"]["path"] == str(folder)
    if which == "qwen":  # the folder name picks the qwen2-vl profile; its sizes are on the 28-pixel grid
        assert report["model"]["profile"]["name"] == "qwen2-vl"
        assert all(w % 28 == 0 and h % 28 == 0 for w, h in (c["sent_size"] for c in report["cases"]))
