"""guitest: a pytest plugin and declarative benchmark suites for GUI agents.

The plain modules (suites, formats, parsing, scoring, models, reports) work
without pytest; only :mod:`guitest.plugin` is pytest glue.
"""

__version__ = "0.1.0"
