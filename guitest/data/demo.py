"""A small synthetic click-grounding benchmark in the ScreenSpot (v1) format, made on the spot.

The demo suite must run on a fresh machine with no download, so :func:`ensure` draws
its screenshots: twelve flat, vaguely realistic screens (phone settings, a shop page,
a mail client, a sign-in form, a text editor, a file manager, a save dialog, a
settings window, a web shop, a forum, a code-hosting site, a file-conversion tool)
at real device resolutions from 1080x2400 to 3840x2160, with 48 targets: buttons,
menu items and list rows carrying drawn text (``data_type`` ``text``) and small drawn
icons (gear, magnifier, close X, trash can, ...: ``icon``).

Every target's ``bbox`` (pixel ``x, y, w, h``, as in ScreenSpot) is exactly the
rectangle drawn for the element: the box's outermost pixels belong to the element and
the 4 pixels around it are plain background. Everything is drawn from a seeded
:class:`random.Random`, so the annotation files are identical on every machine and
the images identical on a given Pillow version. Text is set in Pillow's built-in font
(``ImageFont.load_default(size=...)``) and shrunk to fit its box, so the boxes never
depend on how a font renders.

Layout of the folder::

    screenspot_mobile.json  screenspot_desktop.json  screenspot_web.json
    images/<mobile|pc|web>_<uuid>.png
    .guitest-demo            (stamp: the generator VERSION; written last)
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import random
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

if TYPE_CHECKING:  # PIL loads where the screens are drawn: a run over data made before never needs it
    from PIL import ImageDraw, ImageFont

try:
    import fcntl
except ImportError:  # not POSIX: concurrent callers fall back on the atomic rename alone
    fcntl = None  # type: ignore[assignment]

VERSION = "guitest-demo 1"  # bump whenever the generated data changes: existing copies regenerate
STAMP = ".guitest-demo"
SPLITS = ("mobile", "desktop", "web")
SEED = 20240611
ANNOTATIONS = tuple(f"screenspot_{split}.json" for split in SPLITS)
IMAGES = "images"

RGB = tuple[int, int, int]
XYWH = tuple[int, int, int, int]


def ensure(folder: str | os.PathLike[str]) -> Path:
    """Make sure ``folder`` holds the current demo data set; return it as a Path.

    Does nothing when ``folder/.guitest-demo`` names the current :data:`VERSION`.
    Otherwise generates the whole set in a temporary folder beside ``folder`` and
    renames it into place, so a reader never sees half a data set; an out-of-date set
    is replaced whole (the folder belongs to the demo: nothing else should live in it).
    A non-empty folder that holds neither a stamp nor only demo files is refused with
    :class:`FileExistsError`, so a mistyped path cannot wipe someone's data.

    Safe to call from several processes at once (pytest-xdist workers): an exclusive
    ``flock`` on ``<parent>/.<name>.lock`` lets one generate while the others wait and
    then find the set current. Without ``fcntl`` they may each generate, and the first
    rename wins.
    """
    folder = Path(folder)
    if _current(folder):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder) as exclusive:
        if _current(folder):
            return folder
        _refuse_foreign(folder)
        if exclusive:
            _remove_leftovers(folder)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
        try:
            _generate(tmp)
            _install(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


# ----------------------------------------------------------------------------- installing


def _current(folder: Path) -> bool:
    try:
        stamp = (folder / STAMP).read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    return stamp == VERSION and all((folder / name).is_file() for name in ANNOTATIONS)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[bool]:
    """Hold an exclusive lock beside ``folder``; yield whether a lock was really taken."""
    if fcntl is None:
        yield False
        return
    # The lock file stays: deleting it would let a late caller lock a different inode.
    with open(folder.parent / f".{folder.name}.lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _refuse_foreign(folder: Path) -> None:
    if (folder.exists() or folder.is_symlink()) and not folder.is_dir():
        raise FileExistsError(f"{folder} exists and is not a folder; refusing to replace it with the demo data")
    if not folder.is_dir() or (folder / STAMP).exists():
        return
    ours = {*ANNOTATIONS, IMAGES, STAMP}
    foreign = sorted(p.name for p in folder.iterdir() if p.name not in ours)
    if foreign:
        raise FileExistsError(
            f"{folder} is not a guitest demo folder (no {STAMP} stamp, and it holds {', '.join(foreign[:5])}); refusing to replace it: choose an empty or new folder for the demo data"
        )


def _remove_leftovers(folder: Path) -> None:
    """Temporary folders of callers that died mid-way (only safe while holding the lock)."""
    for pattern in (f".{folder.name}.tmp-*", f".{folder.name}.old-*"):
        for path in folder.parent.glob(pattern):
            shutil.rmtree(path, ignore_errors=True)


def _install(tmp: Path, folder: Path) -> None:
    """Rename the complete set ``tmp`` to ``folder``, moving an old set aside first."""
    with contextlib.suppress(OSError):
        os.rename(tmp, folder)  # succeeds when folder is absent (or an empty directory)
        return
    if _current(folder):  # another caller (no lock available) installed first: keep theirs
        return
    old = folder.parent / f".{folder.name}.old-{uuid.uuid4().hex}"
    with contextlib.suppress(FileNotFoundError):
        os.rename(folder, old)
    try:
        os.rename(tmp, folder)
    except OSError:
        if not _current(folder):
            raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _generate(dest: Path) -> None:
    """Write the whole data set into the empty folder ``dest``; the stamp last."""
    (dest / IMAGES).mkdir()
    rows: dict[str, list[dict[str, Any]]] = {split: [] for split in SPLITS}
    for split, source, size, draw in SCREENS:
        rng = random.Random(f"{SEED}/{draw.__name__}")
        prefix = {"mobile": "mobile", "desktop": "pc", "web": "web"}[split]
        name = f"{prefix}_{uuid.UUID(int=rng.getrandbits(128), version=4)}.png"
        screen = _Screen(size, rng)
        draw(screen)
        screen.image.save(dest / IMAGES / name, format="PNG", compress_level=1)
        for box, instruction, data_type in screen.targets:
            rows[split].append(
                {
                    "img_filename": name,
                    "bbox": list(box),
                    "instruction": instruction,
                    "data_type": data_type,
                    "data_source": source,
                }
            )
    for split in SPLITS:
        text = json.dumps(rows[split], indent=1, ensure_ascii=False) + "\n"
        (dest / f"screenspot_{split}.json").write_text(text, encoding="utf-8")
    (dest / STAMP).write_text(VERSION + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- drawing


@functools.lru_cache(maxsize=None)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has one bitmap size only
        return ImageFont.load_default()


def _shade(colour: RGB, delta: int) -> RGB:
    return tuple(max(0, min(255, c + delta)) for c in colour)  # type: ignore[return-value]


class _Screen:
    """A canvas plus the targets drawn on it; all boxes are integer ``(x, y, w, h)``."""

    def __init__(self, size: tuple[int, int], rng: random.Random) -> None:
        from PIL import Image, ImageDraw

        self.size = size
        self.rng = rng
        self.image = Image.new("RGB", size, (255, 255, 255))
        self.draw = ImageDraw.Draw(self.image)
        self.targets: list[tuple[XYWH, str, str]] = []

    def rect(self, box: XYWH, fill: RGB | None, outline: RGB | None = None, width: int = 1) -> None:
        """Fill exactly the pixels ``x .. x+w-1`` by ``y .. y+h-1``."""
        x, y, w, h = box
        self.draw.rectangle((x, y, x + w - 1, y + h - 1), fill=fill, outline=outline, width=width)

    def text(self, box: XYWH, label: str, ink: RGB, size: int, align: str = "center", pad: int | None = None) -> None:
        """``label`` inside ``box``, shrunk until it fits with ``pad`` px to spare left and right, centred vertically."""
        x, y, w, h = box
        pad = max(3, round(h * 0.15)) if pad is None else pad
        room_w, room_h = w - 2 * pad, h - 2 * max(2, round(h * 0.1))
        size = max(6, min(size, room_h))
        while True:
            font = _font(size)
            left, top, right, bottom = font.getbbox(label)
            if size <= 6 or (right - left <= room_w and bottom - top <= room_h):
                break
            size -= 1
        cy = y + h / 2 - (top + bottom) / 2
        cx = x + pad - left if align == "left" else x + w / 2 - (left + right) / 2
        self.draw.text((round(cx), round(cy)), label, font=font, fill=ink)

    def button(
        self,
        box: XYWH,
        label: str,
        *,
        fill: RGB,
        ink: RGB,
        size: int,
        outline: RGB | None = None,
        align: str = "center",
        pad: int | None = None,
        target: str | None = None,
    ) -> XYWH:
        """A filled rectangle with a label; ``target`` (an instruction) makes it a text target."""
        self.rect(box, fill, outline, width=max(1, box[3] // 30) if outline else 1)
        self.text(box, label, ink, size, align, pad)
        if target:
            self.targets.append((box, target, "text"))
        return box

    def icon(self, box: XYWH, kind: str, *, fill: RGB, ink: RGB, outline: RGB | None = None, target: str | None = None) -> XYWH:
        """A square icon button: a filled rectangle with a glyph; ``target`` makes it an icon target."""
        self.rect(box, fill, outline)
        _GLYPHS[kind](self.draw, box, ink, fill)
        if target:
            self.targets.append((box, target, "icon"))
        return box

    def lines(self, box: XYWH, colour: RGB, count: int, height: int, gap: int) -> None:
        """Grey bars standing in for paragraphs of text."""
        x, y, w, _ = box
        for i in range(count):
            length = round(w * self.rng.uniform(0.55, 1.0))
            self.rect((x, y + i * (height + gap), length, height), colour)


# Glyphs: drawn inside the central 70% of the box, so the box's outer pixels stay the button fill.


def _geometry(box: XYWH) -> tuple[float, float, float, int]:
    x, y, w, h = box
    s = min(w, h)
    return x + w / 2, y + h / 2, s * 0.3, max(2, round(s * 0.07))


def _g_close(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.line([(cx - r, cy - r), (cx + r, cy + r)], fill=ink, width=lw)
    d.line([(cx - r, cy + r), (cx + r, cy - r)], fill=ink, width=lw)


def _g_plus(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.line([(cx - r, cy), (cx + r, cy)], fill=ink, width=lw)
    d.line([(cx, cy - r), (cx, cy + r)], fill=ink, width=lw)


def _g_search(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    ox, oy, rr = cx - r * 0.25, cy - r * 0.25, r * 0.7
    d.ellipse((ox - rr, oy - rr, ox + rr, oy + rr), outline=ink, width=lw)
    d.line([(ox + rr * 0.7, oy + rr * 0.7), (cx + r, cy + r)], fill=ink, width=lw + 1)


def _g_gear(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    for i in range(4):
        a = math.pi / 4 * i
        dx, dy = math.cos(a) * r, math.sin(a) * r
        d.line([(cx - dx, cy - dy), (cx + dx, cy + dy)], fill=ink, width=max(3, round(r * 0.45)))
    ro, ri = r * 0.72, r * 0.3
    d.ellipse((cx - ro, cy - ro, cx + ro, cy + ro), fill=ink)
    d.ellipse((cx - ri, cy - ri, cx + ri, cy + ri), fill=bg)


def _g_trash(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.rectangle((cx - r * 0.3, cy - r, cx + r * 0.3, cy - r * 0.7), fill=ink)
    d.rectangle((cx - r, cy - r * 0.75, cx + r, cy - r * 0.55), fill=ink)
    d.polygon([(cx - r * 0.75, cy - r * 0.4), (cx + r * 0.75, cy - r * 0.4), (cx + r * 0.6, cy + r), (cx - r * 0.6, cy + r)], fill=ink)
    for k in (-0.3, 0.0, 0.3):
        d.line([(cx + r * k, cy - r * 0.2), (cx + r * k, cy + r * 0.8)], fill=bg, width=max(1, lw // 2))


def _g_heart(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    q = r * 0.52
    d.ellipse((cx - 2 * q, cy - r * 0.85, cx, cy - r * 0.85 + 2 * q), fill=ink)
    d.ellipse((cx, cy - r * 0.85, cx + 2 * q, cy - r * 0.85 + 2 * q), fill=ink)
    d.polygon([(cx - 2 * q + 1, cy - r * 0.2), (cx + 2 * q - 1, cy - r * 0.2), (cx, cy + r)], fill=ink)


def _g_bell(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.pieslice((cx - r * 0.7, cy - r, cx + r * 0.7, cy + r * 0.4), 180, 360, fill=ink)
    d.rectangle((cx - r * 0.7, cy - r * 0.3, cx + r * 0.7, cy + r * 0.5), fill=ink)
    d.rectangle((cx - r, cy + r * 0.45, cx + r, cy + r * 0.65), fill=ink)
    d.ellipse((cx - r * 0.22, cy + r * 0.62, cx + r * 0.22, cy + r), fill=ink)


def _g_home(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.polygon([(cx - r, cy - r * 0.05), (cx, cy - r), (cx + r, cy - r * 0.05)], fill=ink)
    d.rectangle((cx - r * 0.7, cy - r * 0.1, cx + r * 0.7, cy + r), fill=ink)
    d.rectangle((cx - r * 0.2, cy + r * 0.3, cx + r * 0.2, cy + r), fill=bg)


def _g_cart(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.line([(cx - r, cy - r), (cx - r * 0.7, cy - r), (cx - r * 0.45, cy + r * 0.4)], fill=ink, width=lw)
    d.polygon([(cx - r * 0.7, cy - r * 0.6), (cx + r, cy - r * 0.6), (cx + r * 0.75, cy + r * 0.4), (cx - r * 0.45, cy + r * 0.4)], fill=ink)
    for wx in (cx - r * 0.3, cx + r * 0.6):
        d.ellipse((wx - r * 0.2, cy + r * 0.6, wx + r * 0.2, cy + r), fill=ink)


def _g_back(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.line([(cx + r * 0.4, cy - r), (cx - r * 0.5, cy), (cx + r * 0.4, cy + r)], fill=ink, width=lw + 1, joint="curve")


def _g_menu(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    for k in (-0.7, 0.0, 0.7):
        d.line([(cx - r, cy + r * k), (cx + r, cy + r * k)], fill=ink, width=lw)


def _g_download(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.line([(cx, cy - r), (cx, cy + r * 0.2)], fill=ink, width=lw + 1)
    d.polygon([(cx - r * 0.55, cy - r * 0.05), (cx + r * 0.55, cy - r * 0.05), (cx, cy + r * 0.55)], fill=ink)
    d.line([(cx - r, cy + r * 0.9), (cx + r, cy + r * 0.9)], fill=ink, width=lw)


def _g_eye(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.ellipse((cx - r, cy - r * 0.6, cx + r, cy + r * 0.6), outline=ink, width=lw)
    d.ellipse((cx - r * 0.3, cy - r * 0.3, cx + r * 0.3, cy + r * 0.3), fill=ink)


def _g_folder(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.rectangle((cx - r, cy - r * 0.8, cx - r * 0.1, cy - r * 0.5), fill=ink)
    d.rectangle((cx - r, cy - r * 0.55, cx + r, cy + r * 0.8), fill=ink)


def _g_share(d: ImageDraw.ImageDraw, box: XYWH, ink: RGB, bg: RGB) -> None:
    cx, cy, r, lw = _geometry(box)
    d.line([(cx - r * 0.4, cy - r * 0.2), (cx - r * 0.8, cy - r * 0.2), (cx - r * 0.8, cy + r), (cx + r * 0.8, cy + r), (cx + r * 0.8, cy - r * 0.2), (cx + r * 0.4, cy - r * 0.2)], fill=ink, width=lw)
    d.line([(cx, cy - r * 0.6), (cx, cy + r * 0.4)], fill=ink, width=lw)
    d.polygon([(cx - r * 0.4, cy - r * 0.5), (cx + r * 0.4, cy - r * 0.5), (cx, cy - r)], fill=ink)


_GLYPHS: dict[str, Callable[[ImageDraw.ImageDraw, XYWH, RGB, RGB], None]] = {
    "close": _g_close,
    "plus": _g_plus,
    "search": _g_search,
    "gear": _g_gear,
    "trash": _g_trash,
    "heart": _g_heart,
    "bell": _g_bell,
    "home": _g_home,
    "cart": _g_cart,
    "back": _g_back,
    "menu": _g_menu,
    "download": _g_download,
    "eye": _g_eye,
    "folder": _g_folder,
    "share": _g_share,
}

ACCENTS: tuple[RGB, ...] = ((0, 122, 255), (52, 120, 246), (88, 86, 214), (0, 150, 136), (211, 47, 47), (230, 120, 0))
INK: RGB = (28, 28, 30)
MUTED: RGB = (120, 120, 128)


# ----------------------------------------------------------------------------- screens
# Coordinates are design units times a scale ``k`` (points on a phone, pixels at 1x on a
# desktop). Every target keeps at least 4 px of plain background around it.


def _phone_status(s: _Screen, k: float, bg: RGB) -> None:
    w, _ = s.size
    s.rect((0, 0, w, round(44 * k)), bg)
    s.text((round(20 * k), round(8 * k), round(60 * k), round(28 * k)), "9:41", INK, round(16 * k), "left", pad=2)
    s.rect((w - round(48 * k), round(16 * k), round(26 * k), round(12 * k)), None, INK, width=max(1, round(k)))
    s.rect((w - round(46 * k), round(18 * k), round(18 * k), round(8 * k)), INK)


def _ios_settings(s: _Screen) -> None:
    w, h = s.size
    k = w / 390
    p = lambda v: round(v * k)  # noqa: E731
    bg, card, press = (242, 242, 247), (255, 255, 255), (226, 226, 232)
    accent = s.rng.choice(ACCENTS)
    s.rect((0, 0, w, h), bg)
    _phone_status(s, k, bg)
    s.icon((p(6), p(50), p(36), p(36)), "back", fill=press, ink=accent, target="go back to the previous screen (back arrow)")
    s.button((w - p(76), p(50), p(64), p(36)), "Edit", fill=press, ink=accent, size=p(17), target="tap Edit at the top right")
    s.text((p(16), p(94), p(240), p(46)), "Settings", INK, p(32), "left", pad=2)
    s.rect((p(16), p(146), w - p(32), p(36)), (227, 227, 233))
    s.text((p(24), p(146), p(200), p(36)), "Search", MUTED, p(17), "left")
    labels = ["Airplane Mode", "Wi-Fi", "Bluetooth", "Cellular", "Notifications", "Sounds & Haptics", "Focus", "Screen Time"]
    s.rng.shuffle(labels)
    labels.insert(s.rng.randrange(3, len(labels)), "Display & Brightness")
    for i, label in enumerate(labels[:9]):
        box = (p(16), p(198) + i * p(58), w - p(32), p(48))
        target = "open Display & Brightness settings" if label == "Display & Brightness" else None
        s.button(box, label, fill=card, ink=INK, size=p(17), align="left", pad=p(52), target=target)
        s.rect((box[0] + p(12), box[1] + p(10), p(28), p(28)), s.rng.choice(ACCENTS))
        s.text((box[0] + box[2] - p(34), box[1], p(24), box[3]), ">", MUTED, p(18))
    bar_y = h - p(83)
    s.rect((0, bar_y, w, p(83)), (249, 249, 249))
    s.rect((0, bar_y, w, max(1, p(0.4))), (200, 200, 205))
    for i, (kind, target) in enumerate([("home", "go to the Home tab (house icon)"), ("search", None), ("bell", None), ("folder", None)]):
        cx = round(w * (i + 0.5) / 4)
        s.icon((cx - p(22), bar_y + p(10), p(44), p(44)), kind, fill=(235, 235, 240), ink=accent if i == 0 else MUTED, target=target)


def _ios_shop(s: _Screen) -> None:
    w, h = s.size
    k = w / 390
    p = lambda v: round(v * k)  # noqa: E731
    bg = (255, 255, 255)
    accent = s.rng.choice(ACCENTS)
    s.rect((0, 0, w, h), bg)
    _phone_status(s, k, bg)
    tool = (240, 240, 244)
    s.icon((p(12), p(52), p(40), p(40)), "close", fill=tool, ink=INK, target="close the product page (X icon)")
    s.icon((w - p(104), p(52), p(40), p(40)), "share", fill=tool, ink=INK)
    s.icon((w - p(52), p(52), p(40), p(40)), "heart", fill=tool, ink=(230, 50, 80), target="add this product to favourites (heart icon)")
    hero = s.rng.choice([(255, 214, 165), (200, 230, 201), (187, 222, 251)])
    s.rect((p(16), p(104), w - p(32), p(300)), hero)
    s.draw.ellipse((p(100), p(170), p(290), p(340)), fill=_shade(hero, -60))
    s.text((p(16), p(418), w - p(32), p(34)), "Trail Running Shoes", INK, p(24), "left", pad=2)
    s.text((p(16), p(456), p(160), p(28)), "$89.00", accent, p(20), "left", pad=2)
    s.lines((p(16), p(498), w - p(32), 0), (225, 225, 230), 3, p(10), p(8))
    s.text((p(16), p(560), p(120), p(24)), "Size", MUTED, p(16), "left", pad=2)
    for i, size in enumerate(["7", "8", "9", "10", "11"]):
        target = "select shoe size 9" if size == "9" else None
        s.button((p(16) + i * p(62), p(592), p(54), p(44)), size, fill=(246, 246, 248), ink=INK, outline=(190, 190, 198), size=p(18), target=target)
    s.button((p(16), h - p(150), w - p(32), p(52)), "Add to Cart", fill=accent, ink=(255, 255, 255), size=p(19), target="add the shoes to the cart")
    s.button((p(16), h - p(90), w - p(32), p(52)), "Buy Now", fill=(246, 246, 248), ink=accent, outline=accent, size=p(19))


def _android_mail(s: _Screen) -> None:
    w, h = s.size
    k = w / 392
    p = lambda v: round(v * k)  # noqa: E731
    bg, bar = (255, 255, 255), (236, 240, 247)
    accent = s.rng.choice(ACCENTS)
    s.rect((0, 0, w, h), bg)
    _phone_status(s, k, bg)
    s.rect((p(12), p(48), w - p(24), p(52)), bar)
    s.icon((p(18), p(54), p(40), p(40)), "menu", fill=(222, 227, 238), ink=INK, target="open the navigation drawer (menu icon)")
    s.text((p(66), p(48), p(200), p(52)), "Search in mail", MUTED, p(16), "left")
    s.draw.ellipse((w - p(58), p(56), w - p(22), p(92)), fill=accent)
    tabs = ["Primary", "Social", "Promotions"]
    for i, tab in enumerate(tabs):
        target = "show the Promotions tab" if tab == "Promotions" else None
        fill = (232, 240, 254) if i == 0 else (246, 246, 248)
        s.button((p(12) + i * p(124), p(112), p(116), p(40)), tab, fill=fill, ink=INK, size=p(15), target=target)
    senders = ["Alice Martin", "GitHub", "Travel Deals", "Bob Chen", "Newsletter", "Calendar", "Dana Ruiz", "Bank"]
    s.rng.shuffle(senders)
    for i, sender in enumerate(senders[:6]):
        y = p(168) + i * p(76)
        s.draw.ellipse((p(16), y + p(8), p(56), y + p(48)), fill=s.rng.choice(ACCENTS))
        s.text((p(68), y + p(4), p(220), p(24)), sender, INK, p(16), "left", pad=1)
        s.lines((p(68), y + p(34), w - p(100), 0), (218, 220, 224), 2, p(7), p(8))
    s.button((w - p(176), h - p(176), p(156), p(56)), "Compose", fill=(194, 231, 255), ink=INK, size=p(17), target="write a new email (Compose)")
    nav_y = h - p(80)
    s.rect((0, nav_y, w, p(80)), bar)
    for i, (kind, target) in enumerate([("home", None), ("bell", "open notifications (bell icon)"), ("gear", None)]):
        cx = round(w * (i + 0.5) / 3)
        s.icon((cx - p(24), nav_y + p(16), p(48), p(48)), kind, fill=(222, 227, 238), ink=INK, target=target)


def _android_login(s: _Screen) -> None:
    w, h = s.size
    k = w / 392
    p = lambda v: round(v * k)  # noqa: E731
    bg = (250, 250, 252)
    accent = s.rng.choice(ACCENTS)
    s.rect((0, 0, w, h), bg)
    _phone_status(s, k, bg)
    s.icon((p(12), p(52), p(44), p(44)), "close", fill=(236, 236, 242), ink=INK, target="close the sign-in screen (X icon)")
    s.draw.ellipse((w // 2 - p(40), p(120), w // 2 + p(40), p(200)), fill=accent)
    s.text((p(24), p(220), w - p(48), p(44)), "Welcome back", INK, p(28), pad=2)
    s.text((p(24), p(270), w - p(48), p(28)), "Sign in to continue", MUTED, p(16), pad=2)
    field = (255, 255, 255)
    s.text((p(24), p(320), p(120), p(22)), "Email", MUTED, p(14), "left", pad=1)
    s.rect((p(24), p(344), w - p(48), p(54)), field, (200, 200, 210), width=max(1, p(1)))
    s.text((p(24), p(344), w - p(48), p(54)), "alex@example.com", INK, p(16), "left", pad=p(14))
    s.text((p(24), p(414), p(120), p(22)), "Password", MUTED, p(14), "left", pad=1)
    s.rect((p(24), p(438), w - p(48), p(54)), field, (200, 200, 210), width=max(1, p(1)))
    for i in range(10):
        s.draw.ellipse((p(40) + i * p(14), p(461), p(48) + i * p(14), p(469)), fill=INK)
    s.icon((w - p(76), p(445), p(40), p(40)), "eye", fill=(240, 240, 245), ink=MUTED, target="show the password (eye icon)")
    s.button((w - p(184), p(508), p(160), p(36)), "Forgot password?", fill=(238, 238, 246), ink=accent, size=p(15), target="reset a forgotten password")
    s.button((p(24), p(572), w - p(48), p(56)), "Sign in", fill=accent, ink=(255, 255, 255), size=p(18), target="sign in")
    s.button((p(24), p(644), w - p(48), p(56)), "Create account", fill=bg, ink=accent, outline=accent, size=p(18))


def _title_bar(s: _Screen, k: float, title: str, colour: RGB, close_target: str | None) -> int:
    """A Windows-style title bar; returns its height."""
    w, _ = s.size
    p = lambda v: round(v * k)  # noqa: E731
    height = p(32)
    s.rect((0, 0, w, height), colour)
    s.text((p(40), 0, p(500), height), title, INK, p(12), "left", pad=p(6))
    s.rect((p(12), p(8), p(16), p(16)), (0, 120, 212))
    for i, kind in enumerate(["min", "max", "close"]):
        box = (w - p(46) * (3 - i) + p(2), p(2), p(42), p(28))
        if kind == "close":
            s.icon(box, "close", fill=(232, 232, 236), ink=INK, target=close_target)
        else:
            s.rect(box, _shade(colour, -10))
            cx, cy = box[0] + box[2] // 2, box[1] + box[3] // 2
            if kind == "min":
                s.rect((cx - p(5), cy, p(10), max(1, p(1))), INK)
            else:
                s.rect((cx - p(5), cy - p(5), p(10), p(10)), None, INK, width=max(1, p(1)))
    return height


def _windows_editor(s: _Screen) -> None:
    w, h = s.size
    k = w / 1920
    p = lambda v: round(v * k)  # noqa: E731
    frame = (243, 243, 243)
    s.rect((0, 0, w, h), frame)
    top = _title_bar(s, k, "meeting-notes.txt - Notepad", frame, "close the Notepad window")
    for i, item in enumerate(["File", "Edit", "Format", "View", "Help"]):
        target = "open the Format menu" if item == "Format" else None
        s.button((p(6) + i * p(66), top + p(4), p(60), p(26)), item, fill=(233, 233, 235), ink=INK, size=p(13), target=target)
    bar = top + p(36)
    s.rect((0, bar, w, p(44)), (250, 250, 250))
    for i, item in enumerate(["New", "Open", "Save", "Print"]):
        target = "save the document" if item == "Save" else None
        s.button((p(8) + i * p(84), bar + p(7), p(76), p(30)), item, fill=(236, 238, 242), ink=INK, outline=(205, 205, 212), size=p(13), target=target)
    s.icon((p(360), bar + p(6), p(32), p(32)), "search", fill=(236, 238, 242), ink=INK, target="find text in the document (magnifier icon)")
    s.icon((p(400), bar + p(6), p(32), p(32)), "share", fill=(236, 238, 242), ink=INK)
    body = bar + p(50)
    s.rect((p(8), body, w - p(16), h - body - p(34)), (255, 255, 255))
    s.lines((p(32), body + p(24), w - p(300), 0), (200, 200, 206), 24, p(12), p(18))
    s.text((p(12), h - p(30), p(400), p(26)), "Ln 12, Col 4    100%    UTF-8", MUTED, p(12), "left", pad=p(4))


def _macos_finder(s: _Screen) -> None:
    w, h = s.size
    k = w / 1440
    p = lambda v: round(v * k)  # noqa: E731
    s.rect((0, 0, w, h), (96, 125, 160))
    s.rect((0, 0, w, p(25)), (236, 236, 238))
    s.draw.ellipse((p(14), p(5), p(29), p(20)), fill=INK)
    for i, item in enumerate(["Finder", "File", "Edit", "View", "Go", "Window", "Help"]):
        target = "open the Go menu in the menu bar" if item == "Go" else None
        s.button((p(40) + i * p(64), p(3), p(58), p(19)), item, fill=(224, 224, 228), ink=INK, size=p(13), target=target)
    x0, y0, ww, wh = p(120), p(70), p(1200), p(760)
    s.rect((x0, y0, ww, wh), (255, 255, 255), (170, 170, 176))
    side = p(200)
    s.rect((x0 + 1, y0 + 1, side, wh - 2), (236, 236, 240))
    for i, colour in enumerate([(255, 95, 87), (254, 188, 46), (40, 200, 64)]):
        s.draw.ellipse((x0 + p(14) + i * p(20), y0 + p(16), x0 + p(26) + i * p(20), y0 + p(28)), fill=colour)
    s.text((x0 + p(12), y0 + p(50), p(150), p(20)), "Favourites", MUTED, p(11), "left", pad=1)
    places = ["AirDrop", "Recents", "Applications", "Desktop", "Documents", "Downloads", "Pictures", "Music"]
    for i, place in enumerate(places):
        target = "show the Downloads folder (sidebar)" if place == "Downloads" else None
        fill = (210, 214, 224) if place == "Documents" else (228, 228, 233)
        s.button((x0 + p(8), y0 + p(74) + i * p(30), side - p(16), p(26)), place, fill=fill, ink=INK, size=p(13), align="left", pad=p(10), target=target)
    tb = (x0 + side + 1, y0 + 1, ww - side - 2, p(52))
    s.rect(tb, (246, 246, 248))
    s.icon((tb[0] + p(12), tb[1] + p(10), p(32), p(32)), "back", fill=(232, 232, 236), ink=INK)
    s.text((tb[0] + p(56), tb[1], p(200), tb[3]), "Documents", INK, p(15), "left", pad=p(12))
    s.icon((tb[0] + tb[2] - p(132), tb[1] + p(10), p(32), p(32)), "gear", fill=(232, 232, 236), ink=INK, target="open the action menu (gear icon)")
    s.icon((tb[0] + tb[2] - p(88), tb[1] + p(10), p(32), p(32)), "trash", fill=(232, 232, 236), ink=INK, target="move the selected file to the Trash (trash icon)")
    s.icon((tb[0] + tb[2] - p(44), tb[1] + p(10), p(32), p(32)), "search", fill=(232, 232, 236), ink=INK)
    names = ["Budget.xlsx", "Notes.txt", "Photos", "Report.pdf", "Slides.key", "Invoices", "Taxes", "Ideas.md"]
    s.rng.shuffle(names)
    for i, name in enumerate(names):
        col, row = i % 4, i // 4
        fx, fy = tb[0] + p(40) + col * p(240), tb[1] + p(90) + row * p(200)
        s.rect((fx + p(40), fy, p(80), p(96)), (120, 170, 230) if "." not in name else (225, 230, 238))
        s.text((fx, fy + p(104), p(160), p(24)), name, INK, p(13), pad=1)


def _linux_dialog(s: _Screen) -> None:
    w, h = s.size
    k = w / 1920
    p = lambda v: round(v * k)  # noqa: E731
    s.rect((0, 0, w, h), (48, 52, 64))
    s.rect((0, 0, w, p(32)), (20, 20, 22))
    s.text((p(12), 0, p(120), p(32)), "Activities", (230, 230, 230), p(14), "left", pad=p(6))
    s.text((w // 2 - p(100), 0, p(200), p(32)), "Tue 10:24", (230, 230, 230), p(14), pad=p(6))
    x0, y0, ww, wh = p(360), p(180), p(1200), p(720)
    s.rect((x0, y0, ww, wh), (250, 250, 250), (60, 60, 66))
    head = (x0 + 1, y0 + 1, ww - 2, p(52))
    s.rect(head, (235, 235, 235))
    s.button((head[0] + p(10), head[1] + p(9), p(96), p(34)), "Cancel", fill=(222, 222, 222), ink=INK, size=p(15), target="cancel saving (Cancel button)")
    s.text((head[0] + p(400), head[1], p(400), head[3]), "Save Document", INK, p(16), pad=p(10))
    accent = s.rng.choice(ACCENTS)
    s.button((head[0] + head[2] - p(106), head[1] + p(9), p(96), p(34)), "Save", fill=accent, ink=(255, 255, 255), size=p(15))
    body_y = head[1] + head[3] + p(10)
    s.text((x0 + p(230), body_y, p(80), p(36)), "Name", INK, p(14), "left", pad=p(6))
    s.rect((x0 + p(300), body_y, p(600), p(36)), (255, 255, 255), (180, 180, 186))
    s.text((x0 + p(300), body_y, p(600), p(36)), "report-final.odt", INK, p(14), "left", pad=p(8))
    s.icon((x0 + ww - p(60), body_y, p(36), p(36)), "plus", fill=(228, 228, 228), ink=INK, target="create a new folder (plus icon)")
    side_y = body_y + p(56)
    s.rect((x0 + 1, side_y, p(210), y0 + wh - side_y - 1), (242, 242, 242))
    for i, (kind, place) in enumerate([("home", "Home"), ("folder", "Documents"), ("download", "Downloads"), ("folder", "Music"), ("trash", "Trash")]):
        y = side_y + p(12) + i * p(42)
        s.icon((x0 + p(10), y, p(34), p(34)), kind, fill=(228, 228, 230), ink=INK, target="go to the Home folder (house icon)" if place == "Home" else None)
        s.text((x0 + p(52), y, p(150), p(34)), place, INK, p(14), "left", pad=p(4))
    s.button((x0 + p(10), side_y + p(12) + 5 * p(42) + p(20), p(190), p(34)), "Other Locations", fill=(230, 230, 232), ink=INK, size=p(14), align="left", pad=p(10), target="browse Other Locations")
    for i in range(12):
        y = side_y + p(12) + i * p(38)
        s.rect((x0 + p(230), y, p(950), p(32)), (246, 246, 246) if i % 2 else (250, 250, 250))
        s.rect((x0 + p(240), y + p(10), round(p(300) * s.rng.uniform(0.4, 1.0)), p(12)), (190, 190, 196))


def _windows_settings(s: _Screen) -> None:
    w, h = s.size
    k = w / 1920
    p = lambda v: round(v * k)  # noqa: E731
    frame = (243, 243, 243)
    s.rect((0, 0, w, h), frame)
    top = _title_bar(s, k, "Settings", frame, "close the Settings window (X in the title bar)")
    s.rect((p(16), top + p(16), p(48), p(48)), (0, 120, 212))
    s.text((p(76), top + p(16), p(260), p(48)), "Alex Doe", INK, p(16), "left", pad=p(12))
    s.rect((p(16), top + p(80), p(240), p(34)), (255, 255, 255), (200, 200, 206))
    s.text((p(16), top + p(80), p(240), p(34)), "Find a setting", MUTED, p(13), "left", pad=p(10))
    s.icon((p(262), top + p(80), p(34), p(34)), "search", fill=(230, 232, 236), ink=INK)
    pages = ["System", "Bluetooth & devices", "Network & internet", "Personalization", "Apps", "Accounts", "Time & language", "Gaming", "Windows Update"]
    for i, page in enumerate(pages):
        target = "open the Personalization settings" if page == "Personalization" else None
        fill = (234, 234, 238) if page != "System" else (224, 228, 236)
        s.button((p(16), top + p(134) + i * p(44), p(280), p(38)), page, fill=fill, ink=INK, size=p(14), align="left", pad=p(14), target=target)
    cx = p(340)
    s.text((cx, top + p(16), p(600), p(56)), "System > Storage", INK, p(28), "left", pad=p(6))
    for i, item in enumerate(["Temporary files", "Apps & features", "Documents", "Pictures", "Other"]):
        y = top + p(100) + i * p(74)
        s.rect((cx, y, w - cx - p(40), p(66)), (251, 251, 251))
        s.text((cx + p(20), y, p(500), p(66)), item, INK, p(14), "left", pad=p(20))
        s.rect((cx + p(560), y + p(28), p(600), p(10)), (220, 220, 224))
        s.rect((cx + p(560), y + p(28), round(p(600) * s.rng.uniform(0.1, 0.9)), p(10)), (0, 120, 212))
        if i == 0:
            s.icon((w - p(120), y + p(14), p(38), p(38)), "trash", fill=(236, 236, 240), ink=INK, target="delete the temporary files (trash icon)")
    s.button((w - p(300), h - p(80), p(120), p(40)), "Apply", fill=(0, 120, 212), ink=(255, 255, 255), size=p(14), target="apply the changes")
    s.button((w - p(170), h - p(80), p(120), p(40)), "Reset", fill=(251, 251, 251), ink=INK, outline=(200, 200, 206), size=p(14))


def _web_header(s: _Screen, k: float, brand: str, colour: RGB) -> int:
    w, _ = s.size
    height = round(64 * k)
    s.rect((0, 0, w, height), colour)
    s.text((round(20 * k), 0, round(200 * k), height), brand, (255, 255, 255), round(22 * k), "left", pad=round(12 * k))
    return height


def _web_shop(s: _Screen) -> None:
    w, h = s.size
    k = w / 1280
    p = lambda v: round(v * k)  # noqa: E731
    s.rng.choice(ACCENTS)  # drawn though unused: the later draws, hence the demo data, stay as they were
    header = (35, 47, 62)
    s.rect((0, 0, w, h), (247, 247, 247))
    top = _web_header(s, k, "ShopMart", header)
    s.rect((p(240), p(14), p(560), p(36)), (255, 255, 255))
    s.text((p(240), p(14), p(400), p(36)), "Search products", MUTED, p(14), "left", pad=p(10))
    s.icon((p(806), p(14), p(36), p(36)), "search", fill=(254, 189, 105), ink=INK, target="search for products (magnifier button)")
    s.button((p(940), p(16), p(96), p(32)), "Sign in", fill=(55, 67, 82), ink=(255, 255, 255), size=p(14), target="sign in to your account")
    s.icon((p(1180), p(12), p(40), p(40)), "cart", fill=(55, 67, 82), ink=(255, 255, 255), target="open the shopping cart (cart icon)")
    products = ["Blue Backpack", "Desk Lamp", "Water Bottle", "Headphones"]
    s.rng.shuffle(products)
    for i, name in enumerate(products):
        x, y = p(40) + i * p(305), top + p(40)
        s.rect((x, y, p(285), p(420)), (255, 255, 255), (222, 222, 226))
        s.rect((x + p(20), y + p(20), p(245), p(200)), s.rng.choice([(187, 222, 251), (255, 224, 178), (200, 230, 201), (225, 190, 231)]))
        s.text((x + p(20), y + p(232), p(245), p(28)), name, INK, p(16), "left", pad=1)
        s.text((x + p(20), y + p(264), p(120), p(24)), f"${s.rng.randrange(15, 120)}.99", (177, 39, 4), p(15), "left", pad=1)
        target = "add the Blue Backpack to the cart" if name == "Blue Backpack" else None
        s.button((x + p(20), y + p(360), p(245), p(40)), "Add to cart", fill=(255, 216, 20), ink=INK, size=p(14), target=target)
    s.lines((p(40), top + p(500), w - p(300), 0), (222, 222, 226), 4, p(10), p(12))


def _web_forum(s: _Screen) -> None:
    w, h = s.size
    k = w / 1280
    p = lambda v: round(v * k)  # noqa: E731
    accent = s.rng.choice(ACCENTS)
    s.rect((0, 0, w, h), (255, 255, 255))
    top = _web_header(s, k, "DevForum", _shade(accent, -40))
    s.icon((w - p(120), p(12), p(40), p(40)), "bell", fill=_shade(accent, -20), ink=(255, 255, 255), target="show your notifications (bell icon)")
    s.draw.ellipse((w - p(64), p(12), w - p(24), p(52)), fill=(255, 255, 255))
    s.button((p(40), top + p(24), p(140), p(38)), "New topic", fill=accent, ink=(255, 255, 255), size=p(15), target="start a new topic")
    for i, item in enumerate(["Latest", "Top", "Categories"]):
        s.button((p(200) + i * p(120), top + p(24), p(110), p(38)), item, fill=(240, 240, 244), ink=INK, size=p(14))
    s.rect((p(40), top + p(80), w - p(80), p(44)), (255, 248, 225))
    s.text((p(40), top + p(80), p(600), p(44)), 'You have an unsaved draft: "Re: build fails on ARM"', INK, p(14), "left", pad=p(12))
    s.icon((w - p(84), top + p(84), p(36), p(36)), "trash", fill=(250, 236, 200), ink=INK, target="discard the draft (trash icon)")
    topics = ["Welcome to DevForum", "Release 2.4 is out", "How to center a div?", "Flaky tests on CI", "Best editor for Rust", "Code review etiquette"]
    s.rng.shuffle(topics)
    for i, topic in enumerate(topics):
        y = top + p(140) + i * p(70)
        target = "open the topic about centering a div" if topic.startswith("How to center") else None
        s.button((p(40), y, p(620), p(40)), topic, fill=(246, 247, 250), ink=INK, size=p(16), align="left", pad=p(10), target=target)
        s.rect((p(40), y + p(48), p(90), p(14)), s.rng.choice(ACCENTS))
        s.text((p(900), y, p(80), p(40)), str(s.rng.randrange(1, 300)), MUTED, p(15), pad=2)
        s.text((p(1040), y, p(120), p(40)), f"{s.rng.randrange(1, 59)}m", MUTED, p(15), pad=2)


def _web_gitlab(s: _Screen) -> None:
    w, h = s.size
    k = w / 1920
    p = lambda v: round(v * k)  # noqa: E731
    s.rect((0, 0, w, h), (251, 250, 253))
    bar = (41, 41, 97)
    s.rect((0, 0, w, p(48)), bar)
    s.icon((p(8), p(6), p(36), p(36)), "menu", fill=(61, 61, 120), ink=(255, 255, 255), target="toggle the main menu (hamburger icon)")
    s.draw.polygon([(p(62), p(14)), (p(76), p(36)), (p(90), p(14))], fill=(226, 67, 41))
    s.rect((p(700), p(8), p(420), p(32)), (70, 70, 130))
    s.text((p(700), p(8), p(420), p(32)), "Search GitLab", (200, 200, 220), p(14), "left", pad=p(10))
    s.icon((w - p(140), p(6), p(36), p(36)), "plus", fill=(61, 61, 120), ink=(255, 255, 255), target="create something new (plus icon in the top bar)")
    s.draw.ellipse((w - p(52), p(8), w - p(20), p(40)), fill=(250, 200, 120))
    s.rect((0, p(48), p(256), h - p(48)), (240, 240, 245))
    for i, item in enumerate(["Project overview", "Repository", "Issues", "Merge requests", "CI/CD", "Deployments", "Wiki", "Settings"]):
        target = "view the merge requests" if item == "Merge requests" else None
        s.button((p(8), p(64) + i * p(40), p(240), p(34)), item, fill=(230, 230, 238), ink=INK, size=p(14), align="left", pad=p(12), target=target)
    s.text((p(290), p(70), p(400), p(44)), "Projects", INK, p(26), "left", pad=p(4))
    s.button((w - p(200), p(72), p(160), p(38)), "New project", fill=(31, 117, 203), ink=(255, 255, 255), size=p(14), target="create a new project")
    names = ["infra / terraform", "web / storefront", "ml / trainer", "tools / cli", "docs / handbook", "mobile / app"]
    s.rng.shuffle(names)
    for i, name in enumerate(names):
        y = p(140) + i * p(84)
        s.rect((p(290), y, w - p(330), p(74)), (255, 255, 255), (225, 225, 232))
        s.rect((p(306), y + p(17), p(40), p(40)), s.rng.choice(ACCENTS))
        s.text((p(362), y + p(8), p(500), p(30)), name, INK, p(16), "left", pad=1)
        s.lines((p(362), y + p(46), p(700), 0), (215, 215, 222), 1, p(10), 0)


def _web_tool(s: _Screen) -> None:
    w, h = s.size
    k = w / 1440
    p = lambda v: round(v * k)  # noqa: E731
    accent = s.rng.choice(ACCENTS)
    s.rect((0, 0, w, h), (244, 246, 250))
    top = _web_header(s, k, "PDF Converter", _shade(accent, -30))
    s.text((p(360), top + p(40), p(720), p(50)), "Convert PDF to Word", INK, p(30), pad=p(4))
    s.rect((p(360), top + p(110), p(720), p(300)), (255, 255, 255), (190, 196, 210), width=max(1, p(2)))
    s.button((p(620), top + p(200), p(200), p(48)), "Upload file", fill=_shade(accent, 160), ink=INK, size=p(16), target="choose a file to upload")
    s.text((p(360), top + p(270), p(720), p(30)), "or drop a PDF here (max 50 MB)", MUTED, p(14), pad=2)
    s.text((p(360), top + p(430), p(300), p(36)), "Output format", INK, p(15), "left", pad=p(4))
    for i, fmt in enumerate(["DOCX", "ODT", "RTF"]):
        s.button((p(560) + i * p(90), top + p(430), p(80), p(36)), fmt, fill=(232, 236, 244), ink=INK, size=p(14))
    s.button((p(360), top + p(490), p(160), p(48)), "Convert", fill=accent, ink=(255, 255, 255), size=p(17), target="start the conversion")
    s.icon((p(536), top + p(494), p(40), p(40)), "download", fill=(226, 232, 242), ink=INK, target="download the converted file (download icon)")
    cy = h - p(90)
    s.rect((0, cy, w, p(90)), (40, 44, 52))
    s.text((p(40), cy, p(900), p(90)), "We use cookies to improve your experience.", (235, 235, 240), p(15), "left", pad=p(20))
    s.button((w - p(260), cy + p(25), p(140), p(40)), "Accept all", fill=(255, 255, 255), ink=INK, size=p(14))
    s.icon((w - p(80), cy + p(25), p(40), p(40)), "close", fill=(60, 64, 74), ink=(255, 255, 255), target="dismiss the cookie banner (X icon)")


# (split, data_source, size, drawing function), in output order.
SCREENS: tuple[tuple[str, str, tuple[int, int], Callable[[_Screen], None]], ...] = (
    ("mobile", "ios", (1170, 2532), _ios_settings),
    ("mobile", "ios", (1170, 2532), _ios_shop),
    ("mobile", "android", (1080, 2400), _android_mail),
    ("mobile", "android", (1080, 2400), _android_login),
    ("desktop", "windows", (1920, 1080), _windows_editor),
    ("desktop", "macos", (2560, 1440), _macos_finder),
    ("desktop", "linux", (3840, 2160), _linux_dialog),
    ("desktop", "windows", (3840, 2160), _windows_settings),
    ("web", "shop", (1280, 800), _web_shop),
    ("web", "forum", (1280, 800), _web_forum),
    ("web", "gitlab", (1920, 1080), _web_gitlab),
    ("web", "tool", (1440, 900), _web_tool),
)
