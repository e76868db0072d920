"""One campaign's board, typed: where each army stands and who controls each province.

``Campaign.board`` is stored as one JSON value (see ``Campaign``)::

    {
        "armies": {
            code: {
                "province": p,
                "in_battle": true,
                "destroyed_in_turn": n,
                "destroyed_by": "loss" | "winner",
            }
        },
        "control": {province: clan | null},
    }

(``in_battle`` only when true; the two ``destroyed_*`` keys only when ``province`` is null.)
This module is the only code that reads or writes that JSON; every app goes through
``Board``.

API::

    board = Board.of(campaign)          # a live view of campaign.board, no query
    # reads
    board.spot(code) -> Spot | None     # None: not placed yet (its clan has not declared)
    board.province_of(code) -> str | None
    board.is_placed(code) -> bool
    board.spots() -> dict[str, Spot]    # every placed army, destroyed ones included
    board.standing_in(province) -> list[str]   # codes of the live armies there, sorted
    board.control_of(province) -> str | None
    board.control() -> dict[str, str | None]   # a copy
    board.rules_armies(armies) -> list[sl5r.rules.turn.Army]   # the engine's armies
    board.to_json() -> dict             # a deep copy of the stored value (logs, snapshots)
    # writes (in memory; ``save`` stores them)
    board.place(code, province=..., in_battle=False)     # put on the board / move
    board.destroy(code, turn=..., by="loss" | "winner")  # off the board, waiting to reform
    board.put(code, spot)               # store a Spot as it is
    board.set_in_battle(code, in_battle)
    board.set_control(province, clan)
    board.replace_control(control)
    board.replace(armies=..., control=...)   # after a resolved turn or an undo
    board.save(also=("version",))       # campaign.save(update_fields=["board", *also])

Writes check nothing about the map (provinces, impassable ones, clans in the game): the
services in ``strategic_map.services`` (``board_place``, ``board_set_control``) do. The
caller holds the campaign row locked (``select_for_update``) before writing.

``Board`` does not copy the JSON: it reads and edits ``campaign.board`` itself, so two views
of one campaign, or a view and a service given the campaign, never disagree.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sl5r.rules.turn import Army as RulesArmy
from sl5r.rules.turn import DestroyedBy
from strategic_map.models import Campaign


class ArmyLike(Protocol):
    """What the board needs of an army: an ``Army`` row or an ``ArmyIdentity``."""

    @property
    def code(self) -> str: ...
    @property
    def clan(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Spot:
    """Where one placed army is: a province, or none (destroyed in a turn, R9)."""

    province: str | None
    in_battle: bool = False
    """At a battle table (R4: its General gives no orders)."""
    destroyed_in_turn: int | None = None
    destroyed_by: DestroyedBy | None = None

    @property
    def destroyed(self) -> bool:
        """Off the board, waiting to reform (R9)."""
        return self.province is None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Spot:
        """The spot stored as ``raw`` (one value of the board's ``armies``)."""
        by = raw.get("destroyed_by")
        return cls(
            province=raw.get("province"),
            in_battle=bool(raw.get("in_battle")),
            destroyed_in_turn=raw.get("destroyed_in_turn"),
            destroyed_by=by if by in ("loss", "winner") else None,
        )

    @classmethod
    def of_rules(cls, army: RulesArmy) -> Spot:
        """Where the engine's ``army`` stands (a live army keeps no destruction fields)."""
        if army.province is None:
            return cls(
                province=None,
                destroyed_in_turn=army.destroyed_in_turn,
                destroyed_by=army.destroyed_by,
            )
        return cls(province=army.province, in_battle=army.in_battle)

    def to_json(self) -> dict[str, Any]:
        """The stored form: ``in_battle`` only when true, ``destroyed_*`` only when destroyed."""
        raw: dict[str, Any] = {"province": self.province}
        if self.in_battle:
            raw["in_battle"] = True
        if self.province is None:
            raw["destroyed_in_turn"] = self.destroyed_in_turn
            raw["destroyed_by"] = self.destroyed_by
        return raw

    def to_rules(self, army: ArmyLike) -> RulesArmy:
        """The engine's army ``army`` standing here."""
        return RulesArmy(
            id=army.code,
            clan=army.clan,
            province=self.province,
            in_battle=self.in_battle,
            destroyed_in_turn=self.destroyed_in_turn,
            destroyed_by=self.destroyed_by,
        )


class Board:
    """A live, typed view of ``campaign.board``; see the module's docstring."""

    __slots__ = ("_campaign",)

    def __init__(self, campaign: Campaign) -> None:
        self._campaign = campaign

    @classmethod
    def of(cls, campaign: Campaign) -> Board:
        """The board of ``campaign`` as loaded with it (no query)."""
        return cls(campaign)

    @property
    def campaign(self) -> Campaign:
        """The campaign whose board this is."""
        return self._campaign

    # The stored dicts. ``campaign.board`` may be replaced whole (a refresh from the
    # database), so it is looked up on every call rather than kept.
    def _raw(self) -> dict[str, Any]:
        raw = self._campaign.board
        if not isinstance(raw, dict):  # the field's default, or a bad hand edit
            raw = self._campaign.board = {}
        return raw

    def _armies(self) -> dict[str, Any]:
        return self._raw().get("armies") or {}

    def _armies_for_write(self) -> dict[str, Any]:
        armies: dict[str, Any] = self._raw().setdefault("armies", {})
        return armies

    def _control(self) -> dict[str, Any]:
        return self._raw().get("control") or {}

    # --- Reads -----------------------------------------------------------------------------

    def spot(self, code: str) -> Spot | None:
        """Where army ``code`` is; ``None`` when it is not on the board yet (R3)."""
        raw = self._armies().get(code)
        return None if raw is None else Spot.from_json(raw)

    def province_of(self, code: str) -> str | None:
        """The province army ``code`` stands in; ``None`` when destroyed or not placed."""
        raw = self._armies().get(code)
        return None if raw is None else raw.get("province")

    def is_placed(self, code: str) -> bool:
        """Whether army ``code`` is on the board (standing, or destroyed and waiting)."""
        return code in self._armies()

    def spots(self) -> dict[str, Spot]:
        """Every placed army's spot by code, in the stored order, destroyed ones included."""
        return {code: Spot.from_json(raw) for code, raw in self._armies().items()}

    def standing_in(self, province: str) -> list[str]:
        """The codes of the armies standing in ``province`` now, sorted."""
        return sorted(
            code for code, raw in self._armies().items() if raw.get("province") == province
        )

    def control_of(self, province: str) -> str | None:
        """The clan controlling ``province``; ``None`` when nobody does."""
        return self._control().get(province)

    def control(self) -> dict[str, str | None]:
        """Who controls each province (a copy: editing it changes nothing)."""
        return dict(self._control())

    def rules_armies(self, armies: Sequence[ArmyLike]) -> list[RulesArmy]:
        """The engine's armies among ``armies``, in that order: those on the board."""
        placed = self._armies()
        return [
            Spot.from_json(placed[army.code]).to_rules(army)
            for army in armies
            if army.code in placed
        ]

    def to_json(self) -> dict[str, Any]:
        """A deep copy of the stored value, e.g. for a log line or a snapshot."""
        return copy.deepcopy(self._raw())

    # --- Writes (in memory until ``save``) ----------------------------------------------------

    def put(self, code: str, spot: Spot) -> None:
        """Store ``spot`` as army ``code``'s, as it is."""
        self._armies_for_write()[code] = spot.to_json()

    def place(self, code: str, *, province: str, in_battle: bool = False) -> None:
        """Put army ``code`` in ``province`` (placed, moved or restored)."""
        self.put(code, Spot(province=province, in_battle=in_battle))

    def destroy(self, code: str, *, turn: int, by: DestroyedBy) -> None:
        """Take army ``code`` off the board, destroyed in ``turn`` (R9: it reforms later)."""
        self.put(code, Spot(province=None, destroyed_in_turn=turn, destroyed_by=by))

    def set_in_battle(self, code: str, in_battle: bool) -> None:
        """Mark a standing army as at a battle table, or not; nothing for any other army."""
        raw = self._armies().get(code)
        if raw is None or raw.get("province") is None:
            return
        if in_battle:
            raw["in_battle"] = True
        else:
            raw.pop("in_battle", None)

    def set_control(self, province: str, clan: str | None) -> None:
        """``clan`` controls ``province`` now (``None``: nobody)."""
        self._raw().setdefault("control", {})[province] = clan

    def replace_control(self, control: Mapping[str, str | None]) -> None:
        """Control is ``control`` now, province by province; the armies stay."""
        self._raw()["control"] = dict(control)

    def replace(self, *, armies: Iterable[RulesArmy], control: Mapping[str, str | None]) -> None:
        """The board after a resolved turn or an undo: the engine's ``armies`` stand where
        they say (armies it does not know of stay where they are) and control is ``control``.
        """
        placed = dict(self._armies())
        placed.update((army.id, Spot.of_rules(army).to_json()) for army in armies)
        # A new value, not an edit: a snapshot taken before still holds the old one.
        self._campaign.board = {**self._raw(), "armies": placed, "control": dict(control)}

    def save(self, *, also: Sequence[str] = ()) -> None:
        """Store the board (and the campaign's fields ``also``) in the database."""
        self._campaign.save(update_fields=["board", *also])
