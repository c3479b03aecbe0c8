"""Root conftest: gives the project's own tests pytester.

The guitest plugin itself is registered through the ``pytest11`` entry point
(pyproject.toml), so suites under ``suites/`` are collected by an installed
guitest, with or without this file.
"""

pytest_plugins = ("pytester",)
