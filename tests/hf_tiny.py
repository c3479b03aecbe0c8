"""Tiny, randomly initialised vision-language checkpoints for the ``hf:`` adapter's tests, built offline.

Nothing is downloaded: the tokenizer is a ``tokenizers`` WordLevel model trained here on a
few strings (plus the chat and vision special tokens), wrapped as a fast tokenizer with a
chat template; the image processors are the PIL-backend classes (no torchvision); the
weights are random. The replies are meaningless; what the tests check is the path.

- :func:`build_llava`: LLaVA = a 2-layer CLIP vision tower (28x28 input, 4 patches) + a
  2-layer Qwen2 text model, with ``LlavaProcessor`` (``CLIPImageProcessorPil``).
- :func:`build_qwen2_vl`: Qwen2-VL (1 vision block, 2 text layers) saved in the layout of the
  published checkpoints (``preprocessor_config.json`` naming ``Qwen2VLProcessor``, tokenizer, chat
  template, no video processor config).
"""

from __future__ import annotations

import json
from pathlib import Path

WORDS = (
    "you are a helpful assistant click the button open file menu close dialog settings save document go back sign in "
    "find ui element described by this instruction give point to as normalized coordinates x y each between 0 and 1 "
    "where top left corner bottom right of screenshot if is not on screen say so instead end your reply with final line "
    "form answer output bounding box in image corresponding 1 2 3 4 5 6 7 8 9 ( ) , . : [ ] { } \" ' - _ = < > |"
)

# Qwen-style special tokens; <|im_end|> ends a turn (the EOS), <|endoftext|> pads.
SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<image>",
]
EXTRA_SPECIAL = ["<|box_start|>", "<|box_end|>", "<|object_ref_start|>", "<|object_ref_end|>"]

# ChatML; the image placeholder differs by family (LLaVA: <image>; Qwen2-VL: vision start/pad/end).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}IMAGE_TOKEN"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tokenizer(folder: Path | None = None):
    """A fast tokenizer: WordLevel over :data:`WORDS` + :data:`SPECIAL`, EOS <|im_end|>, pad <|endoftext|>, left padding."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["[UNK]", *SPECIAL])
    tok.train_from_iterator([WORDS, WORDS.upper()], trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=EXTRA_SPECIAL,
        padding_side="left",
    )
    return fast


def _text_config(vocab: int, **extra):
    return dict(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=4096,
        **extra,
    )


def build_llava(folder: Path) -> Path:
    """Save a tiny LLaVA (CLIP vision tower + Qwen2 text model) and its processor to ``folder``."""
    import torch
    from transformers import CLIPImageProcessorPil, CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor, Qwen2Config

    torch.manual_seed(0)
    tok = tokenizer()
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=28, patch_size=14, projection_dim=32)
    text = Qwen2Config(**_text_config(len(tok)), bos_token_id=None, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        projector_hidden_act="gelu",
    )
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(folder)
    images = CLIPImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(
        image_processor=images,
        tokenizer=tok,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        image_token="<image>",
        chat_template=CHAT_TEMPLATE.replace("IMAGE_TOKEN", "<image>\n"),
    )
    processor.save_pretrained(folder)
    return folder


def build_qwen2_vl(folder: Path) -> Path:
    """Save a tiny Qwen2-VL and an image-only ``Qwen2VLProcessor`` (PIL image processor, no video processor) to ``folder``."""
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessorPil

    torch.manual_seed(0)
    tok = tokenizer()
    ids = tok.convert_tokens_to_ids
    text = _text_config(
        len(tok),
        rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0},
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        bos_token_id=None,
    )
    vision = dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2, patch_size=14, spatial_merge_size=2, temporal_patch_size=2)
    config = Qwen2VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
    )
    model = Qwen2VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(folder)
    # The layout of the published Qwen2-VL checkpoints: preprocessor_config.json naming Qwen2VLProcessor,
    # the tokenizer files and the chat template; no video_preprocessor_config.json.
    Qwen2VLImageProcessorPil(min_pixels=28 * 28, max_pixels=28 * 28 * 1280).save_pretrained(folder)
    config_file = folder / "preprocessor_config.json"
    data = json.loads(config_file.read_text())
    data["processor_class"] = "Qwen2VLProcessor"
    config_file.write_text(json.dumps(data, indent=2))
    tok.chat_template = CHAT_TEMPLATE.replace("IMAGE_TOKEN", "<|vision_start|><|image_pad|><|vision_end|>")
    tok.save_pretrained(folder)
    return folder
