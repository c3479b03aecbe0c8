"""Images: open (header first, pixels once), and encode for sending."""

from __future__ import annotations

import base64
import io

from PIL import Image

Image.MAX_IMAGE_PIXELS = 64_000_000  # 8K screenshots are legitimate; beyond that is a decompression bomb


def open_image(path: str) -> Image.Image:
    """Open an image lazily: the header (size, mode) is read now, the pixels on first use.

    Raises OSError (FileNotFoundError, PIL's UnidentifiedImageError) when it is missing
    or not an image. Close it (or use it in a ``with``) when done.
    """
    return Image.open(path)


def decode_rgb(image: Image.Image) -> Image.Image:
    """The pixels of an opened image, decoded once, as RGB."""
    image.load()
    return image if image.mode == "RGB" else image.convert("RGB")


def png_data_uri(image: Image.Image) -> str:
    """The image as a ``data:image/png;base64,...`` URI (fast PNG compression: lossless, screenshots stay sharp)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
