"""One rule for every name a person types: a player's, a judge's, a tournament's, a key's label.

A name is stored normalised once: Unicode NFKC (a full-width ``ｊｕｄｇｅ`` is ``judge``, a
no-break space a space), trimmed, inner runs of white space made one space. A character
that cannot be seen or that controls the terminal (NUL, ESC, a byte-order mark, a zero-width
space, a bidirectional override, the Hangul fillers…) is refused, naming it: two names that
differ only by one would look the same on every page and in the log, and PostgreSQL cannot
store NUL at all. Two names are one when their normalised forms differ only in case or ё/е
(``name_key``).
"""

from __future__ import annotations

import unicodedata

from django.utils.translation import gettext as _

from referees.kernel.core import refusal

# The code of a refusal for a name with a character that cannot be seen (400).
INVISIBLE_CODE = "invisible_character"

# Unicode's control, format (zero-width, BOM, bidi), private-use, surrogate, unassigned and
# line/paragraph separator categories: none is a visible letter of a name.
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
# Letters and marks that draw nothing: the Hangul fillers, the Braille blank, the combining
# grapheme joiner, the Mongolian vowel separator, the Khmer inherent vowels.
_UNSEEN_CHARACTERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180e\u2800\u3164\uffa0")


def name_spaced(text: str) -> str:
    """``text`` as stored: NFKC, trimmed, inner runs of white space made one space."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def name_key(text: str) -> str:
    """What names are compared by: the stored form, in any case, ё as е."""
    return name_spaced(text).casefold().replace("ё", "е")


def name_unseen_character(text: str) -> str | None:
    """The first character of ``text`` that cannot be seen, as ``U+FEFF (ZERO WIDTH
    NO-BREAK SPACE)``; None when there is none. White space is not one: it is collapsed."""
    for character in text:
        if character.isspace():
            continue
        if unicodedata.category(character) in _UNSEEN_CATEGORIES or character in _UNSEEN_CHARACTERS:
            label = unicodedata.name(character, "")
            code = f"U+{ord(character):04X}"
            return f"{code} ({label})" if label else code
    return None


def name_problem(text: str, *, field: str) -> str | None:
    """Why ``text`` cannot be the ``field`` (translated, "name: the character …"); None if
    it can. For a list that gathers every line's problems before refusing."""
    character = name_unseen_character(text)
    if character is None:
        return None
    return _(
        "%(field)s: the character %(character)s cannot be in a name: it cannot be seen, so "
        "two names would look the same"
    ) % {"field": field, "character": character}


def name_checked(text: str, *, field: str) -> str:
    """``text`` as stored (``name_spaced``), or a refusal naming its unseen character."""
    problem = name_problem(text, field=field)
    if problem is not None:
        raise refusal(problem, INVISIBLE_CODE)
    return name_spaced(text)
