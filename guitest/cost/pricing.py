"""What a model call costs in dollars: the user's own prices (``--prices FILE``) when they name the model, else
the prices the kept library genai-prices (https://github.com/pydantic/genai-prices) ships for it.

genai-prices applies each provider's rates for input, output, cache reads and cache writes (and their tiers, and
prices that changed on a date, by the call's time). Its prices are dated by the library's release: guitest reads
the snapshot bundled in the installed version (never the auto-update, which fetches over the network), and the
report names that version as the source. The endpoint picks the provider when genai-prices knows its URL (OpenAI's,
Anthropic's, ...); an endpoint it does not know (self-hosted, a proxy, loopback) is priced by the model's name
alone, and the source says so: a self-hosted model that borrows a provider's model name needs ``--prices``.

A prices file (YAML or JSON) maps a model's name (as ``--model`` gives it after the prefix) to dollars per million
tokens, and may give the date the prices were agreed and a self-hosted endpoint's rate per hour::

    my-qwen-endpoint:
      input: 0.20          # dollars per million input tokens (cached ones included unless cache_read is given)
      output: 0.60
      cache_read: 0.05     # optional: a cached input token's price
      cache_write: 0.25    # optional: a token written to the provider's cache
      as_of: 2026-11-01    # optional: the date of these prices, shown as their source's date
      per_hour: 2.50       # optional: the endpoint's (GPU's) dollars per hour, charged for the run's wall time
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from .. import yamlfile
from ..errors import GuitestError
from .usage import Usage, shown

#: the keys of a model's entry in a prices file
PRICE_KEYS = ("input", "output", "cache_read", "cache_write", "as_of", "per_hour")


class PricesError(GuitestError):
    """A prices file that cannot be read, or an entry in it that is not a price."""


@dataclass(frozen=True)
class Rates:
    """A model's dollars per million tokens from a prices file (``cache_read``/``cache_write`` None: as input; ``input``
    and ``output`` None: the model is charged by the hour only, ``per_hour``)."""

    input: float | None
    output: float | None
    cache_read: float | None = None
    cache_write: float | None = None
    per_hour: float | None = None


class Pricer:
    """Prices the calls of one model: ``source`` says where the prices come from (the report keeps it)."""

    def __init__(self, model: str, source: dict[str, Any], rates: Rates | None = None, provider_url: str | None = None) -> None:
        self.model = model
        self.source = source
        self.rates = rates
        self.provider_url = provider_url  # genai-prices: the endpoint it knows, None to match by the model's name
        self.per_hour = rates.per_hour if rates is not None else None

    def price(self, usage: Usage | None, when: float) -> float | None:
        """The dollars of one call's ``usage`` made at ``when`` (epoch seconds); None when its usage is unknown."""
        if usage is None or usage.input_tokens is None and usage.output_tokens is None:
            return None
        if self.rates is not None:
            return _by_rates(self.rates, usage) if self.rates.input is not None and self.rates.output is not None else None
        if self.source.get("source") == "none":
            return None
        from genai_prices import Usage as PricedUsage
        from genai_prices import calc_price

        counts = {"input_tokens": usage.input_tokens or 0, "output_tokens": usage.output_tokens or 0}
        if usage.cache_read_tokens:
            counts["cache_read_tokens"] = usage.cache_read_tokens
        if usage.cache_write_tokens:
            counts["cache_write_tokens"] = usage.cache_write_tokens
        stamp = datetime.fromtimestamp(when, timezone.utc)
        return float(calc_price(PricedUsage(**counts), self.model, provider_api_url=self.provider_url, genai_request_timestamp=stamp).total_price)


def _by_rates(rates: Rates, usage: Usage) -> float:
    read = usage.cache_read_tokens or 0 if rates.cache_read is not None else 0
    write = usage.cache_write_tokens or 0 if rates.cache_write is not None else 0
    plain = max((usage.input_tokens or 0) - read - write, 0)
    dollars = plain * (rates.input or 0.0) + (usage.output_tokens or 0) * (rates.output or 0.0)
    dollars += read * (rates.cache_read or 0.0) + write * (rates.cache_write or 0.0)
    return dollars / 1_000_000


def read_prices(path: str) -> dict[str, dict[str, Any]]:
    """The prices file at ``path``: per model, ``{"rates": Rates, "as_of": date or None}``.
    Raises :class:`PricesError` naming the file, the model and the field that is wrong."""
    try:
        text = Path(path).read_text("utf-8")
    except OSError as exc:
        raise PricesError(f"--prices={path}: cannot read the prices file ({exc})") from None
    try:
        data = json.loads(text) if path.endswith(".json") else yamlfile.load(text)
    except Exception as exc:  # yaml's and json's errors both say where
        raise PricesError(f"--prices={path}: not a YAML or JSON file ({exc})") from None
    if not isinstance(data, Mapping) or not data:
        raise PricesError(f"--prices={path}: expected a mapping of model names to prices (see docs/costs.md)")
    out: dict[str, Any] = {}
    for name, entry in data.items():
        where = f"--prices={path}, model {name!r}"
        if not isinstance(entry, Mapping):
            raise PricesError(f"{where}: expected a mapping with input and output (dollars per million tokens)")
        unknown = sorted(set(entry) - set(PRICE_KEYS))
        if unknown:
            raise PricesError(f"{where}: unknown field(s) {', '.join(map(str, unknown))} (known: {', '.join(PRICE_KEYS)})")
        numbers: dict[str, float | None] = {}
        for key in ("input", "output", "cache_read", "cache_write", "per_hour"):
            value = entry.get(key)
            numbers[key] = None if value is None else _dollars(value)
            if value is not None and numbers[key] is None:
                raise PricesError(f"{where}, field {key!r}: expected a finite number of dollars >= 0, got {shown(value)}")
        if numbers["per_hour"] is None and (numbers["input"] is None or numbers["output"] is None):
            raise PricesError(f"{where}: give input and output (dollars per million tokens), or per_hour for a self-hosted endpoint")
        out[str(name)] = {
            "rates": Rates(numbers["input"], numbers["output"], numbers["cache_read"], numbers["cache_write"], numbers["per_hour"]),
            "as_of": None if entry.get("as_of") is None else str(entry["as_of"]),
        }
    return out


def _dollars(value: Any) -> float | None:
    """A price as a finite number of dollars >= 0, or None when it is not one (a string, NaN, infinity, a negative
    number, an integer too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        dollars = float(value)
    except OverflowError:
        return None
    return dollars if math.isfinite(dollars) and dollars >= 0 else None


def make_pricer(model: str, base_url: str | None, prices: str | None) -> Pricer:
    """The pricer of ``model`` (its name at the endpoint ``base_url``; None for a model run on this machine): from the
    ``prices`` file when it names the model, ``prices`` ``off``: none, else genai-prices' (imported only here, for an
    endpoint's model). A model with no known price gets a pricer whose ``source`` says why and whose prices are None."""
    if prices == "off":
        return Pricer(model, {"source": "none", "why": "--prices=off"})
    if prices:
        table = read_prices(prices)
        entry = table.get(model)
        if entry is not None:
            rates = entry["rates"]
            source = {"source": f"--prices={prices}", "model": model, "as_of": entry["as_of"]}
            if rates.per_hour is not None:
                source["per_hour"] = rates.per_hour
            return Pricer(model, source, rates)
    if base_url is None:  # a model run here (hf:): no provider's price; a prices file's per_hour gives its machine's
        return Pricer(
            model, {"source": "none", "why": "a model run on this machine" + (f" that --prices={prices} does not name" if prices else "; give its machine's rate with --prices FILE (per_hour)")}
        )
    try:
        import genai_prices
        from genai_prices import Usage as PricedUsage
        from genai_prices import calc_price
    except ImportError:
        return Pricer(model, {"source": "none", "why": "genai-prices is not installed (pip install genai-prices; it needs Python 3.11 or later)"})
    version = f"genai-prices {genai_prices.__version__}"
    url = base_url if base_url and _known_url(base_url) else None
    try:
        found = calc_price(PricedUsage(input_tokens=1, output_tokens=1), model, provider_api_url=url)  # None: by the model's name
    except LookupError:
        why = f"{version} has no price for {model!r}" + (f" at {url}" if url else "")
        return Pricer(model, {"source": "none", "why": why + (f" and --prices={prices} does not name it" if prices else "; give your own with --prices FILE")})
    source = {
        "source": version,
        "model": found.model.id,
        "provider": found.provider.id,
        "matched_by": "endpoint" if url else "model name (the endpoint is not one genai-prices knows)",
        "as_of": f"{version}'s release",
    }
    return Pricer(model, source, provider_url=url)


def _known_url(url: str) -> bool:
    """Whether genai-prices knows the provider at ``url`` (a loopback or self-hosted endpoint it does not)."""
    from genai_prices import data_snapshot

    try:
        data_snapshot.get_snapshot().find_provider(None, None, url)
    except (LookupError, AttributeError, TypeError):
        return False
    return True
