"""Images: open (header first, pixels once), and encode for sending."""

from __future__ import annotations

import base64
import io

from PIL import Image

Image.MAX_IMAGE_PIXELS = 64_000_000  # 8K screenshots are legitimate; beyond that is a decompression bomb


def open_image(path: str) -> Image.Image:
    """Open an image and decode its pixels once, as RGB; raise OSError when it is missing or unreadable."""
    with Image.open(path) as img:
        img.load()
        return img.convert("RGB") if img.mode != "RGB" else img.copy()


def png_data_uri(image: Image.Image) -> str:
    """The image as a ``data:image/png;base64,...`` URI (fast PNG compression: lossless, screenshots stay sharp)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
