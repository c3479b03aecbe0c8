"""Images: open (header first, pixels once), and encode for sending."""

from __future__ import annotations

import base64
import io
import math

from PIL import Image

Image.MAX_IMAGE_PIXELS = 64_000_000  # 8K screenshots are legitimate; beyond that is a decompression bomb


class ImageTooLarge(OSError):
    """An image with more pixels than PIL decodes safely (``Image.MAX_IMAGE_PIXELS`` twice over): a decompression
    bomb, or a screenshot no model takes. An OSError, so a case reports it as its unreadable image."""


def open_image(path: str) -> Image.Image:
    """Open an image lazily: the header (size, mode) is read now, the pixels on first use.

    The file is read once, in one go: its bytes stay with the image for :func:`as_file`
    (a screenshot sent as it is needs them anyway; one read instead of a second open
    and read of the same file, which costs interpreter time at hundreds of cases a second).
    Raises OSError (FileNotFoundError, PIL's UnidentifiedImageError naming the file) when
    it is missing or not an image. Close it (or use it in a ``with``) when done.
    """
    with open(path, "rb") as f:
        data = f.read()
    return image_from_bytes(data, path)


def image_from_bytes(data: bytes, name: str) -> Image.Image:
    """An image opened lazily from encoded bytes (a live screenshot), ``name`` standing for its file name in
    messages; like :func:`open_image`, it keeps the bytes, so a screenshot sent at its own size goes as it is."""
    try:
        image = Image.open(io.BytesIO(data))
    except Image.UnidentifiedImageError:
        raise Image.UnidentifiedImageError(f"cannot identify image file {name!r}") from None
    except Image.DecompressionBombError as exc:  # not an OSError: it escaped the case as a traceback and lost it
        raise ImageTooLarge(f"{name}: {exc}") from None
    image.filename = name  # what PIL sets when it opens a path itself
    image._guitest_bytes = data  # type: ignore[attr-defined]
    return image


# Pixel modes every image processor reads (they convert to RGB themselves): palette PNGs
# included, which screenshot tools and `guitest placeholders` write; 16-bit and CMYK are not.
SENT_AS_IS_MODES = ("RGB", "RGBA", "L", "LA", "P")


def as_file(image: Image.Image, size: tuple[int, int], max_bytes: int | None = None) -> tuple[bytes, str] | None:
    """The opened image's file bytes and MIME type when it can be sent as it is: PNG or JPEG, already at
    ``size``, in one of :data:`SENT_AS_IS_MODES` and within ``max_bytes``. Saves a decode and an encode (most of a case's cost on 4K screenshots)."""
    mime = {"PNG": "image/png", "JPEG": "image/jpeg"}.get(image.format or "")
    path = getattr(image, "filename", None)
    if mime is None or not path or image.size != tuple(size) or image.mode not in SENT_AS_IS_MODES:
        return None
    data = getattr(image, "_guitest_bytes", None)
    if data is None:  # opened by PIL itself, not by open_image
        with open(path, "rb") as f:
            data = f.read()
    if max_bytes and len(data) > max_bytes:
        return None
    return data, mime


def decode_rgb(image: Image.Image) -> Image.Image:
    """The pixels of an opened image, decoded once, as RGB."""
    image.load()
    return image if image.mode == "RGB" else image.convert("RGB")


def smart_resize(width: int, height: int, factor: int = 28, min_pixels: int = 56 * 56, max_pixels: int = 28 * 28 * 16384) -> tuple[int, int]:
    """Qwen2-VL's ``smart_resize``: both sides multiples of ``factor``, pixels within [min_pixels, max_pixels].

    Returns ``(width, height)`` (the original returns height first). Same arithmetic as
    ``transformers.models.qwen2_vl.image_processing_qwen2_vl.smart_resize``.
    """
    if max(width, height) / min(width, height) > 200:
        raise ValueError(f"aspect ratio of {width}x{height} is over 200, which smart_resize refuses")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return w_bar, h_bar


def target_size(size: tuple[int, int], kind: str, factor: int, min_pixels: int | None, max_pixels: int | None) -> tuple[int, int]:
    """The size a screenshot of ``size`` is sent at, for a sizing rule (see :class:`guitest.profiles.Sizing`)."""
    w, h = size
    if kind == "smart_resize":
        return smart_resize(w, h, factor, min_pixels or factor * factor, max_pixels or 28 * 28 * 16384)
    pixels = w * h
    if max_pixels and pixels > max_pixels:
        scale = math.sqrt(max_pixels / pixels)
    elif min_pixels and pixels < min_pixels:
        scale = math.sqrt(min_pixels / pixels)
    else:
        return size
    return max(1, math.floor(w * scale)), max(1, math.floor(h * scale))


def resized(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """``image`` at ``size`` (the same object when it already is)."""
    return image if image.size == tuple(size) else image.resize(size, Image.Resampling.BICUBIC)


def encode(image: Image.Image, max_bytes: int | None = None) -> tuple[bytes, str, Image.Image]:
    """Encode for sending: lossless PNG; over ``max_bytes``, JPEG (quality 90), then downscaled JPEG.

    Returns the bytes, their MIME type, and the image they encode (smaller than the
    input only when the byte limit forced a downscale).
    """
    data = _save(image, "PNG")
    if not max_bytes or len(data) <= max_bytes:
        return data, "image/png", image
    data = _save(image, "JPEG")
    for _ in range(8):
        if len(data) <= max_bytes:
            return data, "image/jpeg", image
        scale = math.sqrt(max_bytes / len(data)) * 0.95
        image = image.resize((max(1, int(image.width * scale)), max(1, int(image.height * scale))), Image.Resampling.BICUBIC)
        data = _save(image, "JPEG")
    return data, "image/jpeg", image


def _save(image: Image.Image, fmt: str) -> bytes:
    buffer = io.BytesIO()
    if fmt == "PNG":
        image.save(buffer, format="PNG", compress_level=1)
    else:
        image.save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def data_uri(data: bytes, mime: str) -> str:
    """``data:<mime>;base64,...``."""
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def thumbnail(image: Image.Image, max_side: int = 320, quality: int = 70) -> str:
    """A ``data:image/jpeg;base64,...`` URI of ``image`` shrunk to fit ``max_side`` (never enlarged).

    Transparent areas are put on white. A 4K screenshot gives about 5-15 KB. The image
    passed in is not modified.
    """
    if max_side < 1:
        raise ValueError(f"max_side must be >= 1, got {max_side}")
    im = image
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    w, h = im.size
    scale = min(1.0, max_side / max(w, h))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    # Integer box-reduce first (fast, and it averages every pixel), then a Lanczos pass to the exact size.
    factor = int(min(w / size[0], h / size[1]) / 2)
    if factor >= 2 and im.mode in ("1", "L", "LA", "RGB", "RGBA", "I", "F", "RGBX", "CMYK", "YCbCr"):
        im = im.reduce(factor)
    if im.mode in ("RGBA", "LA", "PA"):
        rgba = im.convert("RGBA")
        base = Image.new("RGB", rgba.size, (255, 255, 255))
        base.paste(rgba, mask=rgba.getchannel("A"))
        im = base
    elif im.mode not in ("RGB", "L"):
        im = im.convert("RGB")
    if im.size != size:
        im = im.resize(size, Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=quality, optimize=True)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
