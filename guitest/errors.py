"""The errors guitest raises for bad input, each with a message a user can act on."""

from __future__ import annotations

from typing import Iterable


class GuitestError(Exception):
    """Base class: the message is complete and meant to be shown as is, without a traceback."""


class SuiteError(GuitestError):
    """A suite file, an annotation file or one of its rows is invalid, or its data is missing."""


class ModelError(GuitestError):
    """A model could not be set up or called (bad spec, endpoint down after retries, bad reply). ``failed``: the
    calls it made that gave no usable reply (:class:`guitest.cost.usage.FailedCall`), set by the adapter that made them, so
    the run counts them (docs/costs.md)."""

    failed: tuple[object, ...] = ()

    def with_failed(self, failed: Iterable[object]) -> "ModelError":
        """This error, carrying ``failed`` (returned, for ``raise error.with_failed(calls)``)."""
        self.failed = tuple(failed)
        return self


def where(file: str, row: int | None = None, row_id: str | None = None, field: str | None = None) -> str:
    """Name a place in the input as ``file, row N (id X), field 'F'`` for error messages."""
    parts = [str(file)]
    if row is not None:
        parts.append(f"row {row}" + (f" (id {row_id})" if row_id else ""))
    if field:
        parts.append(f"field '{field}'")
    return ", ".join(parts)


class PaidError(ModelError):
    """A reply the model was paid for but that cannot be used (a refusal): ``usage`` (:class:`guitest.cost.usage.Usage`,
    or None) is what the call used, counted in the run's cost and budget."""

    def __init__(self, message: str, usage: object = None) -> None:
        super().__init__(message)
        self.usage = usage


class EndpointDown(ModelError):
    """The case was not asked: every endpoint of the model is unreachable or failing (``url``: the one that
    failed last, credentials removed; ``state``: ``unreachable`` or ``failing``; ``reason``: its last error).
    The case is an error, so ``--lf`` asks it later."""

    def __init__(self, message: str, url: str, state: str, reason: str) -> None:
        super().__init__(message)
        self.url = url
        self.state = state
        self.reason = reason

    def describe(self) -> dict[str, str]:
        """Plain builtins for the case's result (the controller's summary says it once for all cases)."""
        return {"url": self.url, "state": self.state, "reason": self.reason}
