"""Keeping secrets out of everything guitest writes: API keys, passwords in URLs, auth tokens.

:class:`Scrubber` replaces known secret strings; :func:`redact_urls` removes the
``user:password@`` part of every URL in a text; :func:`scrub_args` makes a command line safe to
record (the report's ``run.pytest_args``, the HTML, logs).
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Iterable

#: ``scheme://user:password@`` in any text (the part before the last ``@`` of the authority)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/\s?#@]*@)+")
#: option names whose value is a secret (``--api-key=...``, ``--token X``, ``--password=...``)
_SECRET_OPTION = re.compile(r"^--?[\w-]*(key|token|secret|password|passwd|auth)[\w-]*$", re.IGNORECASE)
HIDDEN = "***"
#: a URL query parameter named like a secret (``?token=...``, ``&apiKey=...``, ``&X-Amz-Signature=...``) up to its value
_SECRET_QUERY = re.compile(r"([?&][\w.-]*(?:key|token|secret|password|passwd|auth|signature)[\w.-]*=)[^&#\s]*", re.IGNORECASE)


def redact_urls(text: str) -> str:
    """``text`` with the credentials of every URL in it removed (``http://u:p@h/`` becomes ``http://h/``) and the value
    of a query parameter named like a secret hidden (``ws://h/?token=abc`` becomes ``ws://h/?token=***``, as browser
    services hand out their endpoints)."""
    if "@" in text:
        text = _USERINFO.sub(lambda m: m.group("scheme"), text)
    if "=" in text and "://" in text:
        text = _SECRET_QUERY.sub(lambda m: m.group(1) + HIDDEN, text)
    return text


def scrub_args(args: Iterable[str]) -> list[str]:
    """A command line safe to record: URL credentials removed, and the value of an option named like a secret
    (``--api-key-env`` names a variable, not a secret, and is kept) replaced by ``***``."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        arg = str(arg)
        if hide_next:
            out.append(HIDDEN)
            hide_next = False
            continue
        name, eq, value = arg.partition("=")
        secret = bool(_SECRET_OPTION.match(name)) and not name.endswith("-env")
        if secret and eq:
            out.append(f"{name}={HIDDEN}")
        elif secret and name.startswith("--"):
            out.append(arg)
            hide_next = True
        else:
            out.append(redact_urls(arg))
    return out


class Scrubber:
    """Replaces each known secret (and its URL-quoted and Basic-auth forms, added by the caller) with ``***``;
    also removes URL credentials. Callable on a text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        for secret in secrets:
            if secret and len(secret) >= 3:  # shorter strings would mangle ordinary text
                self._secrets.add(secret)
                self._secrets.add(urllib.parse.quote(secret, safe=""))

    def __call__(self, text: str) -> str:
        return self.known(redact_urls(text))

    def known(self, text: str) -> str:
        """``text`` with the known secrets replaced, nothing else touched (a model's reply: a URL with a user in it
        that is not one of ours stays as the model wrote it)."""
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, HIDDEN)
        return text
