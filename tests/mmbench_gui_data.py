"""Test data for MMBench-GUI: tiny L1/L2 annotation files with exactly the documented fields, and blank screenshots.

The layout is the published one under a data root: ``MMBench-GUI/L1_annotations.json``,
``MMBench-GUI/L2_annotations.json``, ``MMBench-GUI/offline_images/<platform>/<image>``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[1]

# image (relative to offline_images/<platform>/, as MMBench-GUI's loader joins them) -> size
IMAGES = {("os_windows", "paint.png"): (200, 100), ("os_ios", "phone.png"): (100, 200), ("os_android", "droid.png"): (120, 240), ("os_mac", "mac.png"): (300, 150)}


def question(text: str, options: dict[str, str], answer: str, difficulty: str) -> dict[str, Any]:
    return {"question": text, "options": options, "answer": answer, "explanation": f"because {answer}", "difficulty": difficulty}


# The released form nests questions in "groups"; item 1 is the flat form of the MMBench-GUI docs.
L1_ROWS: list[dict[str, Any]] = [
    {
        "index": 0,
        "image_path": "paint.png",
        "image_size": [200, 100],
        "platform": "os_windows",
        "app_name": "Paint",
        "groups": [
            question("Which application is open?", {"A": "Paint", "B": "Word", "C": "Excel"}, "A", "easy"),
            question("Where is the colour palette?", {"A": "top", "B": "bottom", "C": "left side", "D": "right side"}, "C", "hard"),
        ],
    },
    {
        "index": 1,
        "image_path": "os_ios/phone.png",
        "image_size": [100, 200],
        "platform": "os_ios",
        "app_name": "Settings",
        **question("Which screen is shown?", {"A": "Home screen", "B": "Settings page"}, "B", "medium"),
    },
    {
        "index": 2,
        "image_path": "droid.png",
        "image_size": [120, 240],
        "platform": "os_android",
        "app_name": "Clock",
        "groups": [
            question("What does the red button do?", {"A": "snooze", "B": "dismiss", "C": "share", "D": "delete", "E": "start the timer"}, "E", "easy"),
            question("How many alarms are set?", {"A": "one", "B": "two", "C": "three", "D": "four"}, "C", "medium"),
        ],
    },
]

# (index, platform, image, bbox normalized, data_type, grounding_type, instruction)
L2_SPEC = [
    (0, "os_windows", "paint.png", [0.1, 0.2, 0.3, 0.4], "text", "basic", "open the file menu"),
    (1, "os_windows", "paint.png", [0.5, 0.5, 0.7, 0.9], "icon", "advanced", "pick the brush tool"),
    (2, "os_mac", "mac.png", [0.0, 0.0, 0.2, 0.2], "text", "basic", "open the apple menu"),
    (3, "os_mac", "mac.png", [0.8, 0.8, 1.0, 1.0], "text", "advanced", "show the notification centre"),
    (4, "os_windows", "paint.png", [0.4, 0.1, 0.6, 0.3], "icon", "basic", "undo the last stroke"),
]


def l2_rows(spec=L2_SPEC) -> list[dict[str, Any]]:
    out = []
    for index, platform, image, bbox, data_type, grounding_type, instruction in spec:
        out.append(
            {
                "index": index,
                "image_path": image,
                "instruction": instruction,
                "bbox": bbox,
                "image_size": list(IMAGES[(platform, image)]),
                "data_type": data_type,
                "platform": platform,
                "app_name": "Paint" if platform == "os_windows" else "Finder",
                "grounding_type": grounding_type,
            }
        )
    return out


def l2_center(index: int, spec=L2_SPEC) -> tuple[float, float]:
    """The normalized centre of row ``index``'s truth box."""
    bbox = next(s[3] for s in spec if s[0] == index)
    return ((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2)


def write_data(root: Path, l1: list[Any] | None = None, l2: list[Any] | None = None) -> Path:
    """Write ``root/MMBench-GUI`` (annotations and blank screenshots); returns ``root`` (the data root)."""
    base = root / "MMBench-GUI"
    for (platform, name), size in IMAGES.items():
        folder = base / "offline_images" / platform
        folder.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", size, (235, 235, 235)).save(folder / name)
    (base / "L1_annotations.json").write_text(json.dumps(L1_ROWS if l1 is None else l1, indent=1))
    (base / "L2_annotations.json").write_text(json.dumps(l2_rows() if l2 is None else l2, indent=1))
    return root


def copy_suites(dest: Path, l1_settings: dict[str, Any] | None = None) -> Path:
    """The shipped ``suites/mmbench_gui`` copied under ``dest/suites``; ``l1_settings`` replace the L1 suite's settings."""
    target = dest / "suites" / "mmbench_gui"
    shutil.copytree(REPO / "suites" / "mmbench_gui", target)
    if l1_settings is not None:
        path = target / "l1" / "suite.yaml"
        suite = yaml.safe_load(path.read_text())
        suite["settings"] = l1_settings
        path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return target
