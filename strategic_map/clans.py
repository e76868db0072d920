"""Display names of the clans (the rules engine knows them by their ids)."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

CLAN_NAMES: dict[str, Promise] = {
    "crab": _("Crab"),
    "crane": _("Crane"),
    "dragon": _("Dragon"),
    "lion": _("Lion"),
    "phoenix": _("Phoenix"),
    "scorpion": _("Scorpion"),
    "shadowlands": _("Shadowlands"),
    "unicorn": _("Unicorn"),
}


def clan_name(clan: str) -> str:
    """The clan's name in the active language; an unknown id is shown as it is."""
    label = CLAN_NAMES.get(clan)
    return str(label) if label is not None else clan
