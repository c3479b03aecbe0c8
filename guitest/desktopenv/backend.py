"""What the ``desktop`` backend (:mod:`guitest.desktopenv.machine`) tells guitest's general modules (:mod:`guitest.backends`): how
``--env-provider``, ``--env-provider-option``, ``--env-url`` and ``--lease-dir`` fold into its options, the machine
a run needs for it, its waits (the settings a report records) and the run header's line on its machines. Every run
loads this module (the header lists the backends); the backend's other modules load only when one of these is asked
for (a run with desktop suites or desktop options), never at startup (tests/test_startup_imports.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..backends import Backend, CommandLine, HeaderOptions
from ..report_parts import LiveSuiteRecord


class Desktop(Backend):
    """The ``desktop`` backend's description (:data:`guitest.registry.BACKENDS`)."""

    def options(self, env_options: Mapping[str, Any], config: CommandLine) -> dict[str, Any]:
        """The suite's options with ``--env-provider`` and its options, ``--env-url``'s machines and ``--lease-dir``."""
        from .provider import with_command_line

        options = with_command_line(env_options, config.env_provider, config.env_provider_option)
        if config.env_url:
            options["urls"] = list(config.env_url)
        if config.lease_dir:
            options["lease_dir"] = config.lease_dir
        return options

    def missing_machine(self, env_options: Mapping[str, Any], config: HeaderOptions) -> str | None:
        """How to get a machine, when neither ``--env-url``, ``--env-provider``, the suite's provider nor a local desktop gives one."""
        if config.env_url or config.env_provider or env_options.get("local_desktop") or env_options.get("provider"):
            return None
        from .machine import NO_MACHINE

        return NO_MACHINE

    def check_option(self, flag: str, value: Any) -> str | None:
        """``--env-provider-option``'s pairs as desktop-env's providers take them."""
        if flag != "--env-provider-option" or not value:
            return None
        from .provider import parse_pairs

        try:
            parse_pairs(value)
        except ValueError as exc:
            return str(exc)
        return None

    def settings(self, options: Mapping[str, Any]) -> LiveSuiteRecord:
        """Its waits (``{"waits": ...}``, :func:`guitest.desktopenv.machine.waits`)."""
        from .machine import waits

        return {"waits": waits(options)}

    def settings_lines(self, record: Mapping[str, Any], about: str = "") -> list[str]:
        """``waits (SUITE): 60 s after the set-up before the first screenshot (env_options), ...``."""
        if not record.get("waits"):
            return []
        from .machine import waits_text

        return [f"waits{f' ({about})' if about else ''}: " + waits_text(record["waits"])]

    def machines_line(self, config: HeaderOptions) -> str | None:
        """The machines ``--env-url`` or ``--env-provider`` gives, asked whether they reset (:func:`guitest.desktopenv.machine.machines_header`)."""
        if not (config.env_url or config.env_provider) or config.collect_only:
            return None
        from .machine import machines_header  # asks the machines: only when there are some

        return machines_header(config.env_url, config.env_provider)


BACKEND = Desktop()
