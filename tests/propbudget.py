"""How many examples a property test draws: its own count in CI, ten times that when searching wide on purpose.

``GUITEST_HYPOTHESIS=wide`` (see tests/conftest.py) multiplies every test's count, since a count written in a
test's ``@settings`` wins over any profile's.
"""

from __future__ import annotations

import os

WIDE = os.environ.get("GUITEST_HYPOTHESIS", "ci") == "wide"


def examples(count: int) -> int:
    """The number of examples for a test that draws ``count`` in CI."""
    return count * 10 if WIDE else count
