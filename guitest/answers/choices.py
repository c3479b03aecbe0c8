"""Reading a multiple-choice answer (a letter A-F) out of a reply.

The rules, in order (docs/design.md, "Coordinates: declared, never guessed": parse the answer where the prompt asked for it):

1. ``<think>...</think>`` is stripped.
2. Answer markers (``Answer: C``, ``Final answer: (C)``, ``The answer is C``, ``the choice is C``,
   ``correct is C``, ``I choose C``, ``\\boxed{C}``, ``答案：C``): the LAST one that says something
   decides. What follows it is read as a letter, else as an option's text quoted back. An explicit
   ``Answer:`` followed by neither (``Answer: not sure``) is no answer, even when an earlier marker
   named a letter; a prose marker followed by neither ("the answer is indeed right") is passed over.
3. Without any marker, weaker cues, the last one winning: ``Option C``, ``**C**``, a line that holds
   only a letter (``C``, ``(C)``, ``C.``), or a line ``C. <the text of option C>``.
4. Without any of those, an option's text quoted back, when exactly one option's text appears.

A letter must stand alone: the article in "the answer is a button" is not option A, and the
first capital of a sentence ("Based on ...", "Deduced from ...") is never read as a letter
(MMBench-GUI's own parser reads those as B and D). Nothing here raises, whatever the string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from .region import MAX_REPLY, strip_think

# A letter token: optional brackets/bold/quotes around one letter, not glued to a word ("e.g." is not E).
_TOKEN = re.compile(r"""[\s*_"'`]*(?P<open>[(\[{]?)\s*(?P<letter>[A-Fa-f])\s*[)\]}]?[*_"'`]*(?!\w|\.\w)""")
_VERB = r"\s*(?:\*\*|__)?\s*(?:is|was|would\s+be|will\s+be|should\s+be|=|[:：])"
# Phrases after which the answer is said; each ends where the answer starts. ``colon``: the explicit
# form the prompt asks for, which names no answer when nothing readable follows it.
_STRONG = re.compile(
    r"(?P<colon>\b(?:final\s+)?answer\s*(?:\*\*|__)?\s*[:：]|答案\s*(?:是|为)?\s*[:：]?)"
    r"|\\boxed\s*\{"
    r"|\bfinal\s+(?:answer|choice)\b(?:" + _VERB + r")?"
    r"|\b(?:correct|right|best)\s+(?:answer|choice|option)" + _VERB + r"|\b(?:answer|choice|selection)" + _VERB + r"|\b(?:correct|right)\s+(?:one\s+)?is\s*[:：]?"
    r"|\bI(?:\s+would|\s+will|'ll|'d)?\s+(?:choose|chose|pick|picked|select|selected|go\s+with)\b",
    re.IGNORECASE,
)
_OPTION_WORD = re.compile(r"\s*(?:\*\*|__)?\s*(?:option|choice|letter)?\s*[:：]?", re.IGNORECASE)
_WEAK = re.compile(
    r"\b(?i:option)\s+(?P<a>[A-F])\b(?!\.\w)"  # Option C
    r"|\*\*\s*\(?(?P<b>[A-F])\)?\s*[.:)]?\s*\*\*"  # **C**
    r"|^[ \t>*_#-]*\(?(?P<c>[A-F])\)?[ \t]*[.:)]?[ \t*_]*$",  # a line holding only the letter
    re.MULTILINE,
)
_LETTER_LINE = re.compile(r"^[ \t>*_-]*\(?(?P<letter>[A-F])\)?[.:)][ \t]+(?P<rest>.+)$", re.MULTILINE)
_SPACE = re.compile(r"\s+")
_ARTICLE = re.compile(r"\s+[a-z]")
_VIA = {"a": "option", "b": "bold", "c": "line"}


@dataclass(frozen=True)
class Chosen:
    """A letter read from a reply and how (``via``: ``marker``, ``marker+text``, ``option``, ``bold``, ``line``, ``text``)."""

    letter: str
    via: str


def _norm(text: str) -> str:
    return _SPACE.sub(" ", re.sub(r"[*_`\"'“”‘’]", "", text)).strip().lower().rstrip(".!")


def _token_at(text: str) -> str | None:
    """The letter standing alone at the start of ``text`` (after an optional "option"/"choice" word), or None.

    An unbracketed ``A``/``a`` followed by a lowercase word is the article, not option A.
    """
    skip = _OPTION_WORD.match(text)
    match = _TOKEN.match(text, skip.end() if skip else 0)
    if match is None:
        return None
    letter = match.group("letter")
    if letter in "Aa" and not match.group("open") and _ARTICLE.match(text, match.end()):
        return None
    return letter.upper()


def _quoted(region: str, options: Mapping[str, str]) -> str | None:
    """The one option whose text appears in ``region`` (the longest wins where one text holds another), else None."""
    said = _norm(region)
    found = [k for k, v in options.items() if _norm(v) and _norm(v) in said]
    # "Settings" inside "Open Settings": keep only texts that are not part of another found text
    found = [k for k in found if not any(o != k and _norm(options[k]) in _norm(options[o]) for o in found)]
    return found[0] if len(found) == 1 else None


def _after(text: str, end: int) -> str:
    """The line an answer marker introduces: the rest of its line, or the next non-empty line when its line ends there."""
    rest = text[end:]
    line, _, more = rest.partition("\n")
    if line.strip(" \t*_") == "":
        line = more.lstrip().split("\n", 1)[0]
    return line


def _by_marker(text: str, options: Mapping[str, str]) -> tuple[bool, Chosen | None]:
    """``(decided, choice)`` from the answer markers, the last readable one winning; an explicit ``Answer:``
    with nothing readable after it decides too (no answer: a retraction); prose markers without an answer are skipped."""
    for marker in reversed(list(_STRONG.finditer(text))):
        line = _after(text, marker.end())
        letter = _token_at(line)
        if letter is not None:
            return True, Chosen(letter, "marker")
        quoted = _quoted(line, options)
        if quoted is not None:
            return True, Chosen(quoted, "marker+text")
        if marker.group("colon"):
            return True, None
    return False, None


def _by_cue(text: str, options: Mapping[str, str]) -> Chosen | None:
    """The last weak cue: ``Option C``, ``**C**``, a line holding only a letter, or ``C. <option C's text>``."""
    cues: list[tuple[int, Chosen]] = []
    for match in _WEAK.finditer(text):
        group = next(g for g in _VIA if match.group(g))
        cues.append((match.start(), Chosen(match.group(group), _VIA[group])))
    for match in _LETTER_LINE.finditer(text):
        letter = match.group("letter")
        if letter in options and _norm(options[letter]) and _norm(match.group("rest")).startswith(_norm(options[letter])):
            cues.append((match.start(), Chosen(letter, "line")))
    return max(cues, key=lambda c: c[0])[1] if cues else None


def read_choice(text: str, options: Mapping[str, str]) -> Chosen | None:
    """The option a reply chooses (a key of ``options``, or another letter A-F it named), or None when it chose none.

    ``options`` maps letters to option texts; texts are used to read an answer quoted back.
    """
    text = strip_think(str(text)[-MAX_REPLY:])
    decided, choice = _by_marker(text, options)
    if decided:
        return choice
    choice = _by_cue(text, options)
    if choice is not None:
        return choice
    quoted = _quoted(text, options)
    return Chosen(quoted, "text") if quoted else None
