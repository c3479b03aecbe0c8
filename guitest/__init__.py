"""guitest: a pytest plugin and declarative benchmark suites for GUI agents.

The plain modules (suites, formats, parsing, scoring, models, reports) work
without pytest; only :mod:`guitest.plugin` is pytest glue.
"""

__version__ = "0.1.0"


def samples(source, *, format: str = "screenspot", images: str = ".", tags=(), id: str | None = None):  # noqa: A002
    """Parametrize a test function with ``sample`` over an annotation file (a path relative to the test
    file, read by the ``format`` reader) or a list of dicts (``image``, ``instruction``, ``box``, tags).

    With the ``guitest_model`` fixture, each case gets a verdict and the run a report, as a suite file does::

        @guitest.samples("data/my_app.json", images="data/shots", tags=["data_type"])
        def test_click(guitest_model, sample):
            assert guitest_model.click(sample) in guitest_model.box(sample)
    """

    def decorate(func):
        func._guitest_samples = {"source": source, "format": format, "images": images, "tags": list(tags), "id": id}
        return func

    return decorate
