"""Every profile end to end: the oracle in the profile's own syntax, and a loopback endpoint that
answers in the profile's convention for an image size it only learns from the request."""

from __future__ import annotations

import json

import pytest

import fakeserver
from builders import ROWS, center_norm, n_rows, write_suite
from guitest.images import smart_resize
from guitest.profiles import PROFILES

# For each profile, a served model name that the name table maps to it (None: only by --model-profile).
SERVED_NAME = {
    "generic": "my-agent-v3",
    "qwen2.5-vl": "Qwen/Qwen2.5-VL-7B-Instruct",
    "qwen2-vl": "Qwen2-VL-7B-Instruct",
    "os-atlas": "OS-Copilot/OS-Atlas-Base-7B",
    "qwen3-vl": "Qwen3-VL-8B-Instruct",
    "ui-tars": "bytedance/UI-TARS-7B-SFT",
    "ui-tars-1.5": "ByteDance-Seed/UI-TARS-1.5-7B",
    "seeclick": "cckevinn/SeeClick",
    "aguvis": "xlangai/Aguvis-7B-720P",
    "gpt-4o": "gpt-4o-2024-08-06",
    "claude": "claude-sonnet-4",
    "auto": None,
}


def report_of(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "tiny.json").read_text())


def test_every_profile_is_covered() -> None:
    assert set(SERVED_NAME) == set(PROFILES)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_oracle_in_each_profiles_syntax_scores_every_case(pytester: pytest.Pytester, profile: str) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", f"--model-profile={profile}", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    report = report_of(pytester)
    assert report["overall"]["hit"] == n_rows()
    assert report["model"]["profile"]["name"] == profile
    result.stdout.fnmatch_lines([f"guitest profile: {profile} (--model-profile)*"])


ENDPOINT_CASES = (
    [pytest.param(p, [], id=f"{p}-serial") for p, name in sorted(SERVED_NAME.items()) if name]
    + [
        # xdist on the profiles that resize or downscale; the others differ from them only in syntax
        pytest.param(p, ["-n", "2"], id=f"{p}-xdist")
        for p in ("generic", "qwen2.5-vl", "ui-tars-1.5")
    ]
    + [
        # the smart_resize done here before sending, instead of by the server's processor
        pytest.param(p, ["--resize=client"], id=f"{p}-client-resize")
        for p in ("qwen2.5-vl", "ui-tars-1.5")
    ]
)


@pytest.mark.parametrize(("profile", "mode"), ENDPOINT_CASES)
def test_endpoint_answering_in_profile_convention(pytester: pytest.Pytester, tmp_path, profile: str, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    spec = PROFILES[profile]
    server_resizes = spec.sizing.kind == "smart_resize" and "--resize=client" not in mode
    processor = {"factor": spec.sizing.factor, "min_pixels": spec.sizing.min_pixels, "max_pixels": spec.sizing.max_pixels}
    script = {}
    for split, _, _, _boxes in ROWS:
        for row, (*_, instruction, _, _) in enumerate(b for s, _, _, bs in ROWS if s == split for b in bs):
            nx, ny = center_norm(split, row)
            action = {"point": [nx, ny], "space": spec.space, "render": spec.render, "decimals": 0 if spec.space == "pixel_sent" else 4}
            script[instruction] = [{**action, "processor": processor} if server_resizes else action]
    extra = ["--max-pixels=60000"] if profile == "generic" else []  # a downscale in a profile that keeps sizes
    with fakeserver.serve(tmp_path, script=script) as server:
        result = pytester.runpytest_subprocess("suites/tiny", f"--model=openai:{SERVED_NAME[profile]}", f"--base-url={server.base_url}", "-p", "no:cacheprovider", *extra, *mode)
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()
    report = report_of(pytester)
    assert report["model"]["profile"]["name"] == profile
    assert report["model"]["profile_reason"].startswith("default" if profile == "generic" else "model name matches")
    assert report["overall"]["hit"] == n_rows(), json.dumps(report["cases"], indent=1)[:3000]
    sent = {tuple(c["size"]): tuple(c["sent_size"]) for c in report["cases"]}
    received = {tuple(r["image_size"]) for r in requests}
    # either the server's processor made the sent size from the original file, or guitest resized before sending
    assert received == (set(sent) if server_resizes else set(sent.values()))
    for (w, h), got in sent.items():
        if spec.sizing.kind == "smart_resize":
            assert got == smart_resize(w, h, 28, spec.sizing.min_pixels, spec.sizing.max_pixels)
            assert got[0] % 28 == 0 and got[1] % 28 == 0
        elif extra:
            assert got[0] * got[1] <= 60000 < w * h or got == (w, h)
        else:
            assert got == (w, h)
