"""``hf:PATH_OR_NAME``: a local Hugging Face transformers vision-language model, run in this process.

The processor and the model are loaded lazily, once per process (pytest-xdist workers
each load their own copy), under a lock: cases run in a thread pool. Loading uses
``AutoProcessor`` and ``AutoModelForImageTextToText``, falling back to the class named in
``config.json`` (``architectures``) where the auto class does not cover it. Without
torchvision, processors that insist on a video processor (Qwen2-VL, Qwen2.5-VL, Qwen3-VL
in transformers 5) are rebuilt image-only: the PIL image processor, the tokenizer and
the chat template, in a subclass of the model's own processor class without the video
processor.

One case, one generation:

- the prompt goes through the processor's chat template: an optional system message,
  then a user message holding the image and the text (a template that refuses a system
  role gets the system text prepended to the user text);
- the image is the one the base ``preprocess`` resized to ``case.sent_size``. For
  dynamic-resolution processors (Qwen-style: ``patch_size`` x ``merge_size`` grid, a pixel
  range) the planned size is snapped to the processor's grid (:meth:`HFModel.plan_size`)
  and the processor is called with a pixel range that contains every image of the batch,
  so its ``smart_resize`` is the identity; the ``image_grid_thw`` it returns is checked
  against the sent size, and a mismatch is an error, never a silent rescale. So the
  model sees exactly the recorded ``sent_size``. Fixed-resolution processors (CLIP,
  SigLIP: LLaVA and the like) resize the sent image to their own input size, as they
  do for every use of the model; ``describe()`` says which case applies;
- ``max_new_tokens`` = ``--max-tokens``; temperature 0 is greedy, above 0 samples; with
  ``--seed`` each attempt calls ``torch.manual_seed(seed + attempt)`` first; the other
  generation defaults (``repetition_penalty``, and ``top_p``/``top_k`` when sampling) are
  the checkpoint's ``generation_config.json``, as vLLM applies them;
- the reply is the generated tokens up to the first EOS, pad and EOS tokens dropped,
  other special tokens (``<|box_start|>``...) kept: profiles parse them.
  ``finish_reason`` is ``length`` when ``max_new_tokens`` tokens came without an EOS.

Batching (``--batch-size`` > 1): a :class:`Batcher` thread collects concurrent
``generate()`` calls (each from its own case thread) into one left-padded batch of up to
``batch_size`` rows: after the first request arrives it waits at most ``batch_wait``
seconds (0.05) for more, then runs the batch and hands each thread its own reply.
Requests arriving while a batch runs form the next one. ``--concurrency`` must be at
least ``--batch-size`` for batches to fill. Seeded sampling (``--seed`` with a
temperature above 0) is never batched, so its replies do not depend on which cases
happened to share a batch.
"""

from __future__ import annotations

import copy
import gc
import importlib.util
import inspect
import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import torch
import transformers
from PIL import Image

from ..errors import ModelError
from ..images import smart_resize
from ..profiles import Profile
from ..cost.usage import Usage
from .base import Case, Model, Prompt, Reply, SentImage, Settings

DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}
BATCH_WAIT = 0.05
TRANSFORMERS_MAJOR = int(transformers.__version__.split(".")[0])


@dataclass
class Request:
    """One ``generate()`` call waiting for its reply."""

    prompt: Prompt
    image: Image.Image
    size: tuple[int, int]
    attempt: int
    done: threading.Event = field(default_factory=threading.Event)
    reply: Reply | None = None
    error: BaseException | None = None


class HFModel(Model):
    """A transformers image-text-to-text model on ``--device`` in ``--dtype``; see the module docstring."""

    uses = ("temperature", "max_tokens", "seed", "concurrency", "min_pixels", "max_pixels", "device", "dtype", "batch_size")

    def __init__(self, name: str, settings: Settings, path: str, profile: Profile | None = None, profile_reason: str = "", batch_wait: float = BATCH_WAIT) -> None:
        super().__init__(name, settings, profile, profile_reason)
        if not path:
            raise ModelError("--model=hf:PATH_OR_NAME needs a local model folder (or a model name already in the Hugging Face cache)")
        self.path = os.path.expanduser(path)
        if _looks_like_path(path) and not os.path.isdir(self.path):
            what = "is a file, not a model folder" if os.path.exists(self.path) else "does not exist"
            raise ModelError(f"--model=hf:{path}: {self.path} {what}; give the folder holding config.json and the weights (save_pretrained / huggingface-cli download --local-dir)")
        self.device_name = str(getattr(settings, "device", "cpu") or "cpu")
        self.dtype_name = str(getattr(settings, "dtype", "auto") or "auto").lower()
        self.batch_size = int(getattr(settings, "batch_size", 1) or 1)
        self.batch_wait = batch_wait
        if self.batch_size < 1:
            raise ModelError(f"--batch-size must be at least 1, got {self.batch_size}")
        if self.dtype_name != "auto" and self.dtype_name not in DTYPES:
            raise ModelError(f"--dtype={self.dtype_name}: expected auto, {', '.join(DTYPES)}")
        self.device = _resolve_device(self.device_name)
        self.processor: Any = None
        self.hf_model: Any = None
        self.architecture: str | None = None
        self.processor_note = ""
        self._factor: int | None = None  # grid of a dynamic-resolution processor, None for fixed-resolution ones
        self._pixel_range: tuple[int, int] | None = None
        self._load_lock = threading.RLock()
        self._gen_lock = threading.Lock()
        self._errors: dict[str, str] = {}
        self._batcher: Batcher | None = None

    # ---- loading -------------------------------------------------------------------------

    def load(self) -> tuple[Any, Any]:
        """Load the processor and the model (once; later calls return them). A failure is remembered and raised again."""
        self._load_processor()
        with self._load_lock:
            if self.hf_model is None:
                self._once("model", self._load_model)
        return self.processor, self.hf_model

    def _once(self, what: str, fn: Any) -> None:
        if what in self._errors:
            raise ModelError(self._errors[what])
        try:
            fn()
        except ModelError as exc:
            self._errors[what] = str(exc)
            raise

    def _load_processor(self) -> Any:
        with self._load_lock:
            if self.processor is None:
                self._once("processor", self._read_processor)
        return self.processor

    def _read_processor(self) -> None:
        where = f"--model={self.name}"
        try:
            processor = transformers.AutoProcessor.from_pretrained(self.path)
        except ImportError as exc:  # e.g. a video processor that needs torchvision
            processor, why = None, str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        except OSError as exc:
            raise ModelError(_not_found(where, self.path, exc)) from None
        except (ValueError, KeyError, TypeError) as exc:
            processor, why = None, f"{type(exc).__name__}: {exc}"
        else:
            why = f"AutoProcessor gave a {type(processor).__name__} without an image processor"
        if processor is None or getattr(processor, "image_processor", None) is None or not hasattr(processor, "tokenizer"):
            processor = self._image_only_processor(why)
        tokenizer = processor.tokenizer
        tokenizer.padding_side = "left"
        if getattr(processor, "chat_template", None) is None:
            template = getattr(tokenizer, "chat_template", None)
            if not template:
                raise ModelError(f"{where}: {self.path} has no chat template (chat_template.jinja, chat_template.json or tokenizer_config.json); add the model's template there")
            processor.chat_template = template
        images = processor.image_processor
        if all(hasattr(images, a) for a in ("patch_size", "merge_size", "temporal_patch_size")):
            self._factor = int(_first(images.patch_size)) * int(images.merge_size)
            self._pixel_range = _pixel_range(images)
            self.processor_note = f"dynamic resolution ({type(images).__name__}): the model sees the sent size, on a {self._factor}-pixel grid"
        else:
            fixed = _fixed_size(images)
            self.processor_note = f"fixed resolution ({type(images).__name__}): the processor resizes the sent image" + (f" to {fixed}" if fixed else "")
        self.processor = processor

    def _config(self, where: str) -> Any:
        """The model folder's config, or a ModelError saying what is wrong with the folder."""
        try:
            return transformers.AutoConfig.from_pretrained(self.path)
        except OSError as exc:
            raise ModelError(_not_found(where, self.path, exc)) from None
        except (ValueError, KeyError) as exc:
            raise ModelError(_unsupported(where, self.path, exc)) from None

    def _image_only_processor(self, why: str) -> Any:
        """The model's processor class without its video processor: image processor (PIL backend without torchvision) + tokenizer + chat template."""
        where = f"--model={self.name}"
        config = self._config(where)
        if getattr(config, "vision_config", None) is None:
            raise ModelError(
                f"{where}: unsupported architecture {_architecture(self.path) or getattr(config, 'model_type', '?')}: "
                f"{self.path} has no image processor and its config no vision_config, so it cannot look at screenshots ({why}); "
                "guitest's hf adapter runs vision-language models such as Qwen2-VL, Qwen2.5-VL, LLaVA"
            )
        try:
            images = transformers.AutoImageProcessor.from_pretrained(self.path)
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.path)
        except OSError as exc:
            raise ModelError(_not_found(where, self.path, exc)) from None
        except (ImportError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"{where}: cannot load an image processor and a tokenizer from {self.path} ({why}; then {type(exc).__name__}: {exc})") from None
        from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

        class_name = _processor_class_name(self.path) or PROCESSOR_MAPPING_NAMES.get(getattr(config, "model_type", ""))
        base = getattr(transformers, class_name, None) if class_name else None
        if base is None:
            raise ModelError(f"{where}: no processor class for model type {getattr(config, 'model_type', '?')!r} in transformers {transformers.__version__} ({why})")
        template = _read_chat_template(self.path) or getattr(tokenizer, "chat_template", None)
        try:
            return image_only(base)(image_processor=images, tokenizer=tokenizer, chat_template=template)
        except Exception as exc:
            raise ModelError(f"{where}: cannot assemble an image-only {class_name} ({why}; then {type(exc).__name__}: {exc})") from None

    def _load_model(self) -> None:
        where = f"--model={self.name}"
        config = self._config(where)
        self.architecture = (getattr(config, "architectures", None) or [type(config).__name__])[0]
        kwargs: dict[str, Any] = {"dtype" if TRANSFORMERS_MAJOR >= 5 else "torch_dtype": DTYPES.get(self.dtype_name, "auto")}
        if self.device != "cpu" and importlib.util.find_spec("accelerate") is not None:
            kwargs["device_map"] = self.device  # straight onto the accelerator, without a full copy in CPU memory first
        model: Any  # an image-text-to-text model of whichever class the checkpoint names
        try:
            try:
                model = transformers.AutoModelForImageTextToText.from_pretrained(self.path, config=config, **kwargs)
            except ValueError as exc:  # "Unrecognized configuration class ... for this kind of AutoModel"
                cls = getattr(transformers, self.architecture or "", None)
                if cls is None or not hasattr(cls, "from_pretrained") or getattr(config, "vision_config", None) is None:
                    raise ModelError(
                        f"{where}: unsupported architecture {self.architecture} (model type {getattr(config, 'model_type', '?')}): "
                        f"transformers {transformers.__version__} has no image-text-to-text class for it ({exc}); "
                        "guitest's hf adapter runs vision-language models such as Qwen2-VL, Qwen2.5-VL, LLaVA"
                    ) from None
                model = cls.from_pretrained(self.path, **kwargs)
            model = model.to(self.device).eval()
        except ModelError:
            raise
        except OSError as exc:
            raise ModelError(_not_found(where, self.path, exc)) from None
        except (torch.OutOfMemoryError, MemoryError) as exc:
            raise ModelError(self._oom("loading the model", exc)) from None
        except RuntimeError as exc:
            if _is_oom(exc):
                raise ModelError(self._oom("loading the model", exc)) from None
            raise ModelError(f"{where}: cannot load {self.path}: {exc}") from None
        if not hasattr(model, "generate"):
            raise ModelError(f"{where}: {self.architecture} cannot generate text")
        self.hf_model = model

    # ---- the four stages -----------------------------------------------------------------

    def plan_size(self, original: tuple[int, int]) -> tuple[int, int]:
        """The profile's size, snapped to a dynamic-resolution processor's grid and pixel range (so it will not resize again)."""
        planned = super().plan_size(original)
        self._load_processor()
        if self._factor is None:
            return planned
        sizing, factor = self.profile.sizing, self._factor
        own = sizing.kind == "smart_resize"
        low, high = self._pixel_range or (factor * factor, 28 * 28 * 16384)
        min_pixels = self.settings.min_pixels or (sizing.min_pixels if own else None) or low
        max_pixels = self.settings.max_pixels or (sizing.max_pixels if own else None) or high
        w, h = planned
        if w % factor == 0 and h % factor == 0 and min_pixels <= w * h <= max_pixels:
            return planned
        return smart_resize(w, h, factor, max(min_pixels, factor * factor), max(max_pixels, factor * factor))

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        if prompt.parts or sum(isinstance(p, int) for _, parts in prompt.turns for p in parts) > 1:
            raise ModelError(
                f"--model={self.name}: hf: models answer one screenshot per case; this prompt sends {len(prompt.images)} images (use an openai: endpoint, or in a live task --history-images=0)"
            )
        if image.image is None:
            raise ModelError("no image to send: preprocess() returned no pixels")
        self.load()
        request = Request(prompt, image.image, tuple(image.size), case.attempt)  # type: ignore[arg-type]
        seeded_sampling = self.settings.temperature > 0 and self.settings.seed is not None
        if self.batch_size > 1 and not seeded_sampling:
            return self._get_batcher().submit(request)
        return self._run([request])[0]

    def _get_batcher(self) -> Batcher:
        with self._load_lock:
            if self._batcher is None:
                self._batcher = Batcher(self._run, self.batch_size, self.batch_wait)
            return self._batcher

    def _run(self, requests: list[Request]) -> list[Reply]:
        """One padded ``generate`` over ``requests`` (serialised with every other generation of this process)."""
        processor, model = self.load()
        inputs = self._inputs(processor, requests)
        if "token_type_ids" in inputs and "token_type_ids" not in inspect.signature(model.forward).parameters:
            del inputs["token_type_ids"]  # some tokenizers return it; generate() rejects arguments the model does not take
        inputs = inputs.to(model.device)
        for key, value in list(inputs.items()):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                inputs[key] = value.to(model.dtype)
        config = self._generation_config(model, processor.tokenizer)
        try:
            with self._gen_lock, torch.inference_mode():
                if self.settings.seed is not None:
                    torch.manual_seed(self.settings.seed + requests[0].attempt)
                output = model.generate(**inputs, generation_config=config)
        except (torch.OutOfMemoryError, MemoryError) as exc:
            raise ModelError(self._oom(f"generating a batch of {len(requests)}", exc)) from None
        except RuntimeError as exc:
            if _is_oom(exc):
                raise ModelError(self._oom(f"generating a batch of {len(requests)}", exc)) from None
            raise
        sequences = output.sequences if hasattr(output, "sequences") else output
        new = sequences[:, inputs["input_ids"].shape[1] :].tolist()
        stops = set(_ids(config.eos_token_id)) | set(_ids(processor.tokenizer.eos_token_id))
        pads = set(_ids(config.pad_token_id)) | set(_ids(processor.tokenizer.pad_token_id))
        # a request's input tokens: its row of the (left-)padded batch without the padding, image tokens included
        mask = inputs.get("attention_mask")
        counted = [int(n) for n in mask.sum(dim=1).tolist()] if mask is not None else [int(inputs["input_ids"].shape[1])] * len(new)
        return [self._reply(row, stops, pads, config.max_new_tokens, processor.tokenizer, n) for row, n in zip(new, counted, strict=True)]

    def _inputs(self, processor: Any, requests: list[Request]) -> Any:
        texts = [self._chat_text(processor, r.prompt) for r in requests]
        images = [r.image for r in requests]
        kwargs: dict[str, Any] = {"return_tensors": "pt", "padding": True}
        if self._factor is not None:
            # A pixel range holding every image of the batch: smart_resize leaves grid-aligned images as they are.
            areas = [w * h for w, h in (r.size for r in requests)]
            low, high = min(areas), max(areas)
            kwargs["size"] = {"shortest_edge": low, "longest_edge": high}
            if TRANSFORMERS_MAJOR < 5:
                kwargs.update(min_pixels=low, max_pixels=high)
        try:
            inputs = processor(text=texts, images=images, **kwargs)
        except (ValueError, TypeError, KeyError) as exc:
            raise ModelError(f"--model={self.name}: the processor rejected the inputs: {type(exc).__name__}: {exc}") from None
        grid = inputs.get("image_grid_thw") if self._factor is not None else None
        if grid is not None:
            patch = self._factor // int(processor.image_processor.merge_size)  # type: ignore[operator]
            for request, (_, gh, gw) in zip(requests, grid.tolist(), strict=True):
                seen = (int(gw) * patch, int(gh) * patch)
                if seen != tuple(request.size):
                    raise ModelError(f"--model={self.name}: the processor resized the {request.size[0]}x{request.size[1]} image to {seen[0]}x{seen[1]}; the recorded sent size would be wrong")
        return inputs

    def _chat_text(self, processor: Any, prompt: Prompt) -> str:
        try:
            return processor.apply_chat_template(_chat(prompt, system_apart=True), add_generation_prompt=True, tokenize=False)
        except Exception as exc:
            if not prompt.system:
                raise ModelError(f"--model={self.name}: the chat template failed: {type(exc).__name__}: {exc}") from None
        # Some templates refuse a system role: say it in the first user turn instead.
        try:
            return processor.apply_chat_template(_chat(prompt, system_apart=False), add_generation_prompt=True, tokenize=False)
        except Exception as exc:
            raise ModelError(f"--model={self.name}: the chat template failed: {type(exc).__name__}: {exc}") from None

    def _generation_config(self, model: Any, tokenizer: Any) -> Any:
        config = copy.deepcopy(model.generation_config)
        config.max_new_tokens = self.settings.max_tokens
        config.max_length = None
        config.num_beams = 1
        config.num_return_sequences = 1
        if self.settings.temperature > 0:
            config.do_sample = True
            config.temperature = self.settings.temperature
        else:  # greedy; sampling knobs of the checkpoint's defaults would only warn
            config.do_sample = False
            config.temperature = None
            config.top_p = None
            config.top_k = None
            config.min_p = None
        if config.eos_token_id is None:
            config.eos_token_id = tokenizer.eos_token_id
        if config.pad_token_id is None:
            config.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else _first(config.eos_token_id)
        return config

    @staticmethod
    def _reply(row: list[int], stops: set[int], pads: set[int], limit: int, tokenizer: Any, input_tokens: int) -> Reply:
        """The reply of one row of generated tokens; its usage counts the tokens generated up to and with the first stop."""
        stopped = next((i for i, t in enumerate(row) if t in stops), None)
        kept = [t for t in (row if stopped is None else row[:stopped]) if t not in pads and t not in stops]
        text = tokenizer.decode(kept, skip_special_tokens=False, clean_up_tokenization_spaces=False).strip()
        finish = "length" if stopped is None and len(row) >= limit else "stop"
        return Reply(text=text, finish_reason=finish, usage=Usage(input_tokens=input_tokens, output_tokens=len(row) if stopped is None else stopped + 1))

    # ---- report --------------------------------------------------------------------------

    def generation_settings(self) -> dict[str, Any]:
        out = super().generation_settings()
        out.update(device=self.device, dtype=self.dtype_name)
        return out

    def identity(self) -> dict[str, Any]:
        """The checkpoint: its folder and the name, size and modification time of each weight and config file
        (a checkpoint saved over an earlier one in the same folder is another identity); a hub id as given."""
        if not os.path.isdir(self.path):
            return {"path": self.path}
        files = []
        for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
            if entry.is_file() and entry.name.endswith((".safetensors", ".bin", ".json", ".model", ".txt", ".jinja")):
                stat = entry.stat()
                files.append([entry.name, stat.st_size, int(stat.st_mtime)])
        return {"path": os.path.abspath(self.path), "files": files}

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["path"] = self.path
        info["device"] = self.device if self.device == self.device_name else f"{self.device} (--device={self.device_name})"
        dtype = self.dtype_name
        if self.hf_model is not None:
            dtype = f"{str(self.hf_model.dtype).removeprefix('torch.')}" + (" (auto: the checkpoint's)" if self.dtype_name == "auto" else "")
        info["dtype"] = dtype
        info["architecture"] = self.architecture or _architecture(self.path)
        info["batch_size"] = self.batch_size
        if self.processor is not None:
            info["processor"] = type(self.processor).__name__
        if self.processor_note:
            info["image_input"] = self.processor_note
        info["versions"] = {"transformers": transformers.__version__, "torch": torch.__version__}
        return info

    def close(self) -> None:
        if self._batcher is not None:
            self._batcher.close()
            self._batcher = None
        self.hf_model = None
        self.processor = None
        gc.collect()
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()

    def _oom(self, doing: str, exc: BaseException) -> str:
        return (
            f"--model={self.name}: out of memory on {self.device} while {doing} ({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}); "
            "lower --batch-size or --concurrency, use --dtype=bfloat16, send smaller images with --max-pixels, or pick a larger device"
        )


class Batcher:
    """Runs concurrent requests as batches of up to ``size``, from one background thread.

    ``submit`` (called from many threads) queues a request and blocks until its reply.
    The thread takes the oldest request, waits up to ``wait`` seconds for the batch to
    fill, runs ``run(batch)`` (a list of replies, in order) and wakes the callers; an
    exception of ``run`` is raised in every caller of that batch.
    """

    def __init__(self, run: Any, size: int, wait: float) -> None:
        self.run = run
        self.size = size
        self.wait = wait
        self._queue: list[Request] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="guitest-hf-batcher", daemon=True)
        self._thread.start()

    def submit(self, request: Request) -> Reply:
        with self._cond:
            if self._closed:
                raise ModelError("the hf model was closed")
            self._queue.append(request)
            self._cond.notify_all()
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.reply is not None
        return request.reply

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return
                deadline = time.monotonic() + self.wait
                while len(self._queue) < self.size and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch, self._queue = self._queue[: self.size], self._queue[self.size :]
            try:
                replies = self.run(batch)
                for request, reply in zip(batch, replies, strict=True):  # a reply short is every request's error
                    request.reply = reply
            except BaseException as exc:  # handed to the callers; the loop keeps serving
                for request in batch:
                    request.error = exc if isinstance(exc, ModelError) else ModelError(f"{type(exc).__name__}: {exc}")
            for request in batch:
                request.done.set()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=60)


def image_only(base: type) -> type:
    """A subclass of processor class ``base`` with only an image processor and a tokenizer (no video processor, hence no torchvision)."""

    class ImageOnly(base):
        attributes = ["image_processor", "tokenizer"]  # transformers 4.x reads this; 5.x reads __init__'s signature

        def __init__(self, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None, **kwargs: Any) -> None:
            super().__init__(image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template, **kwargs)

    ImageOnly.__name__ = ImageOnly.__qualname__ = f"ImageOnly{base.__name__}"
    return ImageOnly


# ---- helpers -----------------------------------------------------------------------------


def _looks_like_path(spec: str) -> bool:
    """A filesystem path rather than a hub name (``org/name`` is a name unless such a folder exists)."""
    return spec.startswith((".", "/", "~")) or spec.count("/") > 1 or os.path.exists(spec)


def _not_found(where: str, path: str, exc: BaseException) -> str:
    return (
        f"{where}: cannot load {path}: {str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__}; "
        "give a local folder holding config.json, the weights, the tokenizer and the processor config "
        "(or a model name already in the Hugging Face cache: huggingface-cli download NAME)"
    )


def _unsupported(where: str, path: str, exc: BaseException) -> str:
    if "trust_remote_code" in str(exc):
        return f"{where}: {path} needs the model's own code (trust_remote_code), which guitest does not run; use a model that transformers {transformers.__version__} supports natively"
    return f"{where}: unsupported model in {path}: {exc} (transformers {transformers.__version__}; a newer transformers may know it)"


def _resolve_device(name: str) -> str:
    if name == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise ModelError(f"--device={name}: not a torch device; expected cpu, cuda, cuda:N, mps or auto") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(f"--device={name}: torch {torch.__version__} sees no CUDA device; use --device=cpu (or install a CUDA build of torch)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ModelError(f"--device={name}: only {torch.cuda.device_count()} CUDA device(s) visible")
    if device.type == "mps" and not (getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()):
        raise ModelError(f"--device={name}: MPS is not available here; use --device=cpu")
    return str(device)


def _is_oom(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "out of memory" in text or "can't allocate memory" in text or "cannot allocate memory" in text


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    if isinstance(value, torch.Tensor):
        return [int(v) for v in value.flatten().tolist()]
    return [int(value)]


def _first(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return value[0] if value else None
    return value


def _pixel_range(images: Any) -> tuple[int, int] | None:
    size = getattr(images, "size", None)
    low = high = None
    if size is not None:
        get = size.get if isinstance(size, dict) else lambda k: getattr(size, k, None)
        low, high = get("shortest_edge"), get("longest_edge")
    low = low or getattr(images, "min_pixels", None)
    high = high or getattr(images, "max_pixels", None)
    return (int(low), int(high)) if low and high else None


def _fixed_size(images: Any) -> str:
    for attr in ("crop_size", "size"):
        size = getattr(images, attr, None)
        if size is None:
            continue
        get = size.get if isinstance(size, dict) else lambda k, s=size: getattr(s, k, None)
        if get("height") and get("width"):
            return f"{get('width')}x{get('height')}"
        if get("shortest_edge"):
            return f"shortest edge {get('shortest_edge')}"
    return ""


def _processor_class_name(path: str) -> str | None:
    for name in ("processor_config.json", "preprocessor_config.json"):
        data = _json_file(path, name)
        if isinstance(data, dict) and isinstance(data.get("processor_class"), str):
            return data["processor_class"]
    return None


def _read_chat_template(path: str) -> str | None:
    text = _text_file(path, "chat_template.jinja")
    if text:
        return text
    data = _json_file(path, "chat_template.json")
    if isinstance(data, dict) and isinstance(data.get("chat_template"), str):
        return data["chat_template"]
    return None


def _architecture(path: str) -> str | None:
    data = _json_file(path, "config.json")
    if isinstance(data, dict):
        archs = data.get("architectures") or []
        return archs[0] if archs else data.get("model_type")
    return None


def _text_file(path: str, name: str) -> str | None:
    file: str | None
    if os.path.isdir(path):
        file = os.path.join(path, name)
    else:
        try:
            from transformers.utils import cached_file

            file = cached_file(path, name, _raise_exceptions_for_missing_entries=False, _raise_exceptions_for_connection_errors=False)
        except Exception:
            return None
    if not file or not os.path.isfile(file):
        return None
    try:
        with open(file, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def _json_file(path: str, name: str) -> Any:
    text = _text_file(path, name)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _chat(prompt: Prompt, system_apart: bool) -> list[dict[str, Any]]:
    """The chat messages of ``prompt`` for a processor's template (its screenshot as an image placeholder): the system
    message apart, or (``system_apart`` False, for templates that refuse a system role) said first in the first user turn."""
    turns = list(prompt.turns) or [("user", (0, prompt.user))]
    messages: list[dict[str, Any]] = [{"role": role, "content": [{"type": "image"} if isinstance(p, int) else {"type": "text", "text": p} for p in parts]} for role, parts in turns]
    if prompt.system and system_apart:
        return [{"role": "system", "content": [{"type": "text", "text": prompt.system}]}, *messages]
    if prompt.system:
        first = next((m for m in messages if m["role"] == "user"), None)
        if first is None:
            return [{"role": "user", "content": [{"type": "text", "text": prompt.system}]}, *messages]
        texts = [c for c in first["content"] if c["type"] == "text"]
        if texts:
            texts[0]["text"] = f"{prompt.system}\n\n{texts[0]['text']}"
        else:
            first["content"].append({"type": "text", "text": prompt.system})
    return messages


def make(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str) -> HFModel:
    """``--model=hf:PATH_OR_NAME``: a local transformers model (its folder, or a name already in the Hugging Face cache)."""
    if not arg:
        raise ModelError("--model=hf:PATH_OR_NAME needs a local model folder (or a model name already in the Hugging Face cache)")
    return HFModel(spec, settings, arg, profile, profile_reason)
