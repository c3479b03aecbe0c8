"""A suite written in Python: plain pytest tests over the demo's desktop screenshots.

    pytest suites/python_example --model=ocr                   # from a checkout
    pytest --pyargs guitest.suites.python_example --model=ocr  # guitest installed with pip

Each sample is one test; ``guitest_model.click`` asks the model, records the case's
verdict and evidence, and the run ends with the same tables and reports as a suite
file (reports/test_demo_clicks.json, .md, .html). A miss here is a failed assert,
because that is what these tests say.
"""

import json

import guitest
from guitest.data import suite_data

# the demo suite's data, generated on first use: suites/demo/data in a checkout, DATA_ROOT/demo/data when guitest is installed
DEMO = suite_data("demo")


@guitest.samples(str(DEMO / "screenspot_desktop.json"), images=str(DEMO / "images"), tags=["data_type", "data_source"])
def test_desktop_target_is_clicked(guitest_model, sample):
    assert guitest_model.click(sample) in guitest_model.box(sample)



ROWS = json.loads((DEMO / "screenspot_mobile.json").read_text())[:2]


# Samples can also be a list of dicts: image (under images=), instruction, box [x1, y1, x2, y2] in pixels, tags.
@guitest.samples(
    [{"id": f"inline-{i}", "image": r["img_filename"], "instruction": r["instruction"], "box": [r["bbox"][0], r["bbox"][1], r["bbox"][0] + r["bbox"][2], r["bbox"][1] + r["bbox"][3]], "platform": r["data_source"]} for i, r in enumerate(ROWS)],
    images=str(DEMO / "images"),
    tags=["platform"],
)
def test_inline_samples(guitest_model, sample):
    assert guitest_model.click(sample) in guitest_model.box(sample)
