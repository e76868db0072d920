"""The paper fallback's pages (issue 32), for the judges of a tournament only.

- ``…/turn-pack``: the open turn's pack, to print on A4: a slip per General with every
  order he may give (``referees.reading.turn_pack.turn_pack``), then the judges' board.
  Every label is printed in both languages at once, the reader's first: the slips go to
  players of either.
- ``…/paper-orders``: the slips typed in, in the order of the pack: one row per army,
  Enter stores the row through the judges' order API (a paper order handed in on time, R4)
  and moves on to the next; each row shows what is stored, or why it was refused.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone, translation
from django.utils.formats import date_format
from django.utils.functional import Promise
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from battles.models import Battle
from referees.http.refusals import judge_or_refusal, problem_page
from referees.kernel.core import TournamentError
from referees.models import Tournament
from referees.reading.turn_pack import BoardArmy, Slip, SlipChoice, StoredOrder, TurnPack, turn_pack
from referees.texts.words import order_refusal_text
from sl5r.api_errors import error_status
from strategic_map.clans import CLAN_NAMES, clan_name
from strategic_map.models import Order

# What the pack prints, in each language at once ({name} placeholders filled in per slip).
PACK_TEXTS: dict[str, Promise] = {
    "title": gettext_lazy("Turn pack"),
    "slip": gettext_lazy("Order slip"),
    "turn": gettext_lazy("Turn {turn}"),
    "deadline": gettext_lazy("Deadline: %(time)s"),
    "paused": gettext_lazy("The clock is paused."),
    "player": gettext_lazy("General"),
    "clan": gettext_lazy("Clan"),
    "army": gettext_lazy("Army"),
    "province": gettext_lazy("Province"),
    "tick_one": gettext_lazy("Tick one box. No box ticked: the army holds."),
    "hold": gettext_lazy("Hold"),
    "move_to": gettext_lazy("Move to"),
    "two_steps": gettext_lazy("Move two provinces (Unicorn, R5.4)"),
    "two_steps_blind": gettext_lazy(
        "A move through or into a province that held an army at the start of the turn is "
        "refused at the deadline: ask your Daimyo (R1.1, R5.4)."
    ),
    "reform_at": gettext_lazy("Reform at"),
    "reform_blind": gettext_lazy(
        "Your clan has a Daimyo, so you do not see which of these castles your clan still "
        "holds (R1.1): ask your Daimyo before you choose. A castle your clan has lost is "
        "refused at the deadline."
    ),
    "reform_from": gettext_lazy("Your army may reform from turn {turn}."),
    "reform_none": gettext_lazy(
        "Your army cannot reform: your clan controls none of its home castles."
    ),
    "in_battle": gettext_lazy(
        "Your army is in a battle: it cannot be given orders until the battle ends."
    ),
    "no_claim": gettext_lazy("Don't take control of the province where the army ends"),
    "swap": gettext_lazy(
        "If enemies move head-on into your army (Scorpion, R5.3), the battle is fought:"
    ),
    "swap_daimyo": gettext_lazy("Your Daimyo decides this (R5.3)."),
    "advance": gettext_lazy("in the province you move to (advance)"),
    "stay": gettext_lazy("in the province you leave (stay)"),
    "signature": gettext_lazy("Signature"),
    "handed_in": gettext_lazy("Handed in at"),
    "entered_by": gettext_lazy("Entered by (judge)"),
    "board": gettext_lazy("The board at the start of the turn (judges only)"),
    "commitment": gettext_lazy("This turn's draws are sealed by commitment"),
    "armies": gettext_lazy("Armies"),
    "general": gettext_lazy("General"),
    "status": gettext_lazy("Status"),
    "order": gettext_lazy("Order"),
    "ends_in": gettext_lazy("Ends in"),
    "destroyed_from": gettext_lazy("destroyed: may reform from turn {turn}"),
    "in_battle_short": gettext_lazy("in a battle"),
    "control": gettext_lazy("Control of the provinces"),
    "home": gettext_lazy("Home clan"),
    "castle": gettext_lazy("Castle"),
    "controlled_by": gettext_lazy("Controlled by"),
    "nobody": gettext_lazy("nobody"),
    "impassable": gettext_lazy("impassable"),
    "tables": gettext_lazy("Open battle tables"),
    "no_tables": gettext_lazy("No battle table is open."),
    "table_status": gettext_lazy("Status"),
    "no_generals": gettext_lazy("No General has an army on the board."),
}


def both(message: Promise, **values: object) -> SafeString:
    """``message`` in every language of the site, the reader's first: "Army · Армия".

    A language whose words are the same as one before it adds nothing.
    """
    current = (translation.get_language() or settings.LANGUAGE_CODE).split("-")[0]
    codes = sorted((code for code, _name in settings.LANGUAGES), key=lambda c: c != current)
    seen: list[tuple[str, str]] = []
    for code in codes:
        with translation.override(code):
            text = str(message)
            if values:
                text = text % values if "%(" in text else text.format(**values)
        if all(text != other for _code, other in seen):
            seen.append((code, text))
    first_code, first = seen[0]
    rest = format_html_join(
        "", '<span class="also" lang="{}"> · {}</span>', ((c, t) for c, t in seen[1:])
    )
    return format_html('<span lang="{}">{}</span>{}', first_code, first, rest)


def _texts() -> dict[str, SafeString]:
    return {key: both(text) for key, text in PACK_TEXTS.items()}


def _clan(clan: str | None) -> SafeString:
    if clan is None:
        return both(PACK_TEXTS["nobody"])
    label = CLAN_NAMES.get(clan)
    return both(label) if label is not None else format_html("{}", clan)


def _choice_label(choice: SlipChoice) -> str:
    """The provinces of a choice as the site names them ("Kaiu Lands → Hida Lands")."""
    return " → ".join(choice.names)


def _slip_groups(slip: Slip, texts: dict[str, SafeString]) -> list[dict[str, Any]]:
    """The slip's boxes under their headings: hold, one province, two provinces, reform."""
    groups: list[dict[str, Any]] = []
    holds = [c for c in slip.choices if c.kind == Order.Kind.HOLD]
    singles = [c for c in slip.choices if c.kind == Order.Kind.MOVE and len(c.path) == 1]
    doubles = [c for c in slip.choices if c.kind == Order.Kind.MOVE and len(c.path) == 2]
    reforms = [c for c in slip.choices if c.kind == Order.Kind.REFORM]
    if holds:
        groups.append({"title": None, "choices": [(c, texts["hold"]) for c in holds]})
    if singles:
        groups.append(
            {"title": texts["move_to"], "choices": [(c, _choice_label(c)) for c in singles]}
        )
    if doubles:
        groups.append(
            {
                "title": texts["two_steps"],
                "choices": [(c, _choice_label(c)) for c in doubles],
                "note": texts["two_steps_blind"] if not slip.sees_map else None,
            }
        )
    if reforms:
        groups.append(
            {
                "title": texts["reform_at"],
                "choices": [(c, _choice_label(c)) for c in reforms],
                "note": texts["reform_blind"] if not slip.sees_map else None,
            }
        )
    return groups


def _slip_note(slip: Slip, turn: int) -> SafeString | None:
    """Why a slip has no box to tick, when it has none."""
    options = slip.options
    if options.in_battle:
        return both(PACK_TEXTS["in_battle"])
    if slip.destroyed and not options.reforms:
        if options.reform_from is not None and turn < options.reform_from:
            return both(PACK_TEXTS["reform_from"], turn=options.reform_from)
        return both(PACK_TEXTS["reform_none"])
    return None


def _deadline_text(pack: TurnPack) -> str:
    if pack.deadline is None:
        return ""
    return date_format(timezone.localtime(pack.deadline), "H:i")


def _army_status(army: BoardArmy, texts: dict[str, SafeString]) -> SafeString | str:
    if army.in_battle:
        return texts["in_battle_short"]
    if army.province is None and army.reform_from is not None:
        return both(PACK_TEXTS["destroyed_from"], turn=army.reform_from)
    return ""


def _refused_page(request: HttpRequest, error: TournamentError) -> HttpResponse:
    return problem_page(request, error_status(error), _("No turn is open"), error.message)


def _pack_or_refusal(
    request: HttpRequest, tournament_id: int, judges_only: str
) -> tuple[Tournament | None, TurnPack | None, HttpResponse | None]:
    tournament, refusal = judge_or_refusal(request, tournament_id, judges_only=judges_only)
    if refusal is not None:
        return None, None, refusal
    assert tournament is not None
    try:
        return tournament, turn_pack(tournament=tournament), None
    except TournamentError as error:
        return tournament, None, _refused_page(request, error)


@never_cache
@require_safe
def turn_pack_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Judges: the open turn's slips and board, ready to print on A4 (issue 32)."""
    tournament, pack, refusal = _pack_or_refusal(
        request,
        tournament_id,
        _("Only a judge of this tournament may print its turn pack."),
    )
    if refusal is not None:
        return refusal
    assert tournament is not None and pack is not None
    with timezone.override(tournament.time_zone):
        texts = _texts()
        slips = [
            {
                "slip": slip,
                "clan": _clan(slip.clan),
                "groups": _slip_groups(slip, texts),
                "note": _slip_note(slip, pack.turn),
                "swap": slip.swap_decided_by,
            }
            for slip in pack.slips
        ]
        armies = [
            {"army": a, "clan": _clan(a.clan), "status": _army_status(a, texts)}
            for a in pack.armies
        ]
        provinces = [
            {
                "province": p,
                "home": _clan(p.home_clan) if p.home_clan else "",
                "controller": _clan(p.controller),
            }
            for p in pack.provinces
        ]
        return render(
            request,
            "referees/turn_pack.html",
            {
                "tournament": tournament,
                "pack": pack,
                "texts": texts,
                "turn_label": both(PACK_TEXTS["turn"], turn=pack.turn),
                "deadline": _deadline_text(pack),
                "deadline_label": both(PACK_TEXTS["deadline"], time=_deadline_text(pack)),
                "slips": slips,
                "armies": armies,
                "provinces": provinces,
                "tables": [
                    {
                        "table": t,
                        "status": both(Battle.Status(t["status"]).label),
                        "armies": [(a, _clan(a["clan"])) for a in t["armies"]],
                    }
                    for t in pack.tables
                ],
            },
        )


def _stored_text(order: StoredOrder | None, names: dict[str, str], slip: Slip) -> str:
    """The stored order in the reader's language, as the console words it."""
    if order is None and slip.destroyed and slip.options.reform_from is not None:
        return _("destroyed: may reform from turn %(turn)s") % {"turn": slip.options.reform_from}
    if order is None:
        return _("no order (holds)")
    if order.kind == Order.Kind.MOVE:
        text = _("move to %(path)s") % {"path": " → ".join(names.get(p, p) for p in order.path)}
    elif order.kind == Order.Kind.REFORM:
        text = _("reform in %(province)s") % {"province": names.get(order.reform, order.reform)}
    else:
        text = _("hold")
    notes = []
    if not order.claim:
        notes.append(_("does not claim"))
    if order.on_swap == Order.OnSwap.STAY and order.kind == Order.Kind.MOVE:
        notes.append(_("on a swap: stay"))
    if order.by_judge:
        notes.append(_("entered by a judge"))
    return f"{text} ({'; '.join(notes)})" if notes else text


def _given_at(order: StoredOrder | None) -> str:
    if order is None:
        return ""
    at: datetime = timezone.localtime(order.given_at)
    return date_format(at, "H:i:s")


@never_cache
@require_safe
def paper_orders_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Judges: the turn pack's slips typed in, one row per army in the order of the pack."""
    tournament, pack, refusal = _pack_or_refusal(
        request,
        tournament_id,
        _("Only a judge of this tournament may enter its paper orders."),
    )
    if refusal is not None:
        return refusal
    assert tournament is not None and pack is not None
    names = {p.id: p.name for p in pack.provinces}
    with timezone.override(tournament.time_zone):
        rows = []
        for slip in pack.slips:
            refused = pack.refused.get(slip.army, {})
            stored = pack.orders.get(slip.army)
            choices = []
            for choice in slip.choices:
                # The list shows what the slip prints beside the box; the row, once
                # stored, says it whole ("Reform at Hida Lands").
                label = _("Hold") if choice.kind == Order.Kind.HOLD else _choice_label(choice)
                text = label
                if choice.kind == Order.Kind.REFORM:
                    text = _("Reform at {province}").format(province=label)
                elif choice.kind == Order.Kind.MOVE:
                    text = _("Move to {path}").format(path=label)
                why = refused.get(choice.value)
                choices.append(
                    {
                        "choice": choice,
                        "label": label,
                        "text": text,
                        "refused": order_refusal_text(*why) if why else "",
                    }
                )
            rows.append(
                {
                    "slip": slip,
                    "clan_name": clan_name(slip.clan),
                    "choices": choices,
                    "stored": _stored_text(stored, names, slip),
                    "stored_at": _given_at(stored),
                    "has_order": stored is not None,
                }
            )
        config = {
            "api": f"/tournaments/{tournament.pk}",
            "turn": pack.turn,
            "strings": {
                "sending": _("Storing…"),
                "stored": "✓ {order}",
                "withdrawn": _("Order withdrawn: the army holds."),
                "refused": _("Refused: {reason}"),
                "would_refuse": _("✗ The turn refuses this box now: {reason}"),
                "summary": _("{stored} stored, {refused} refused, {waiting} waiting."),
                "no_claim": _("does not claim"),
                "stay": _("on a swap: stay"),
                "network": _(
                    "The server could not be reached. Check the connection and try again."
                ),
                "server_error": _("The server answered with an error ({status})."),
            },
        }
        return render(
            request,
            "referees/paper_orders.html",
            {
                "tournament": tournament,
                "pack": pack,
                "deadline": _deadline_text(pack),
                "rows": rows,
                "config": config,
            },
        )
