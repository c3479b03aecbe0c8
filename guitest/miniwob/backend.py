"""What the ``miniwob`` backend tells guitest's general modules (:mod:`guitest.backends`): its tasks run in a web page,
and its episodes' partial rewards make a success a rule (:mod:`.rules`): ``--success-rule``'s choices, the rule a
suite runs by, the report's ``run.success_rule`` record and how it reads, and the run header's line on the option."""

from __future__ import annotations

from typing import Any, Mapping

from ..backends import HeaderOptions, Rule, RunField, WebPage
from . import rules


class MiniWoB(WebPage):
    """The ``miniwob`` backend's description (:data:`guitest.registry.BACKENDS`)."""

    success_rules = rules.RULES
    title = "MiniWoB++"
    run_fields = {"success_rule": RunField("success rule", lambda record: rules.summary_line(dict(record)).removeprefix("success rule: "))}

    def success_rule(self, settings: Mapping[str, Any], option: str | None, suite_path: str) -> Rule | None:
        chosen = rules.choose("miniwob", settings, option, suite_path)
        return Rule(chosen.name, chosen.source, chosen.to_dict()) if chosen else None

    def run_record(self, settings: Mapping[str, Any], option: str | None) -> dict[str, Any]:
        return rules.record("miniwob", settings, option)

    def option_lines(self, config: HeaderOptions) -> list[str]:
        return [rules.header_line(config.success_rule)] if config.success_rule else []


BACKEND = MiniWoB()
