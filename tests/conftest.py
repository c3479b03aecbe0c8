"""Property tests draw the same inputs on every run unless asked to explore.

A test suite that draws new random inputs on every CI run makes landing a lottery: a rare input found by
chance fails a change that did not cause it. So the default profile, ``ci``, is derandomized (the examples
come from a fixed seed per test) and keeps no example database. To search wide on purpose, run

    GUITEST_HYPOTHESIS=wide pytest tests -p no:xdist -k "fuzz or metrics or parsing"

which draws fresh inputs, ten times as many (tests/propbudget.py), and remembers failures in ``.hypothesis/``; put each input it
finds into an explicit test (``@example``) so CI checks it from then on.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("wide", derandomize=False, print_blob=True)  # counts x10: tests/propbudget.py

_PROFILE = os.environ.get("GUITEST_HYPOTHESIS", "ci")
if _PROFILE not in ("ci", "wide"):
    raise SystemExit(f"GUITEST_HYPOTHESIS={_PROFILE!r}: expected 'ci' (the default: the same inputs every run) or 'wide' (fresh inputs, more of them)")
settings.load_profile(_PROFILE)
