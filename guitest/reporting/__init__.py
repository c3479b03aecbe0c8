"""The report side: what a run's results become once every case has been scored. Nothing is imported eagerly
(importing this package costs nothing; a worker that only runs cases never loads the report code).

- :mod:`~guitest.reporting.report`: the run report, a JSON document, its Markdown summary and terminal tables.
- :mod:`~guitest.reporting.html`: the HTML report's page: settings, tables, charts, and the viewer of its cases.
- :mod:`~guitest.reporting.viewer_data`: the viewer's data: the case index and each case's detail, in chunks.
- :mod:`~guitest.reporting.thumbnails`: the HTML report's pictures of the screenshots, linked or embedded.
- :mod:`~guitest.reporting.summary`: the run header's lines and each suite's terminal summary.
- :mod:`~guitest.reporting.tallies`: counting verdicts per category, accuracy with 95% Wilson intervals.
- :mod:`~guitest.reporting.episodes`: live tasks over episodes: success rates, steps, EQA.
- :mod:`~guitest.reporting.agreement`: agreement between two raters (a judge and the labels), Cohen's kappa.
- :mod:`~guitest.reporting.gate`: the release gate, accuracy thresholds overall and per category.
- :mod:`~guitest.reporting.compare`: two reports compared, a paired exact McNemar test (``guitest compare``).
- :mod:`~guitest.reporting.significance`: the statistics of a comparison: McNemar and its power, avg@K's noise test, clustered standard errors.
- :mod:`~guitest.reporting.history`: earlier runs' reports kept beside the latest.
"""
