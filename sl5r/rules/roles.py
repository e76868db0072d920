"""Players, roles and the start of the game (R1, R1.1, R3).

Who plays what for a given number of players, what each role may see and do, and whether
a clan's declared starting provinces are allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

from .clans import CLANS, SHADOWLANDS
from .errors import LineupError
from .mapgraph import GameMap


class Role(str, Enum):
    GENERAL = "general"
    DAIMYO = "daimyo"
    KARO = "karo"


class ShortfallRule(str, Enum):
    """R1: what to do with a player count that is not a multiple of 8."""

    EXCLUDE_SHADOWLANDS = "exclude_shadowlands"  # (a)
    SMALLER_CLANS = "smaller_clans"  # (b)


class ThreeVariant(str, Enum):
    """R1: the 24-player choice, three per clan."""

    THREE_GENERALS = "three_generals"
    GENERALS_AND_DAIMYO = "generals_and_daimyo"


G, D, K = Role.GENERAL, Role.DAIMYO, Role.KARO

MIN_PER_CLAN: Final = 1
MAX_PER_CLAN: Final = 6


def clan_roles(size: int, variant: ThreeVariant = ThreeVariant.GENERALS_AND_DAIMYO) -> list[Role]:
    """R1's table: the roles of one clan with ``size`` members."""
    if size == 3:
        return [G, G, G] if variant is ThreeVariant.THREE_GENERALS else [G, G, D]
    table: dict[int, list[Role]] = {
        1: [G],
        2: [G, G],
        4: [G, G, G, D],
        5: [G, G, G, D, K],
        6: [G, G, G, G, D, K],
    }
    if size not in table:
        raise LineupError("players", f"a clan has 1 to 6 members, not {size}")
    return list(table[size])


def _one_fewer(roles: list[Role]) -> list[Role]:
    # R1 (b): drop the Karo first, then the Daimyo, and only then a General.
    for role in (K, D, G):
        if role in roles:
            fewer = list(roles)
            fewer.remove(role)
            return fewer
    return roles


@dataclass(frozen=True, slots=True)
class Lineup:
    """The proposed roles of every clan in the game."""

    clans: Mapping[str, tuple[Role, ...]]
    excluded_clans: frozenset[str]

    @property
    def players(self) -> int:
        return sum(len(r) for r in self.clans.values())

    def generals(self, clan: str) -> int:
        return self.clans[clan].count(G)


def lineup_propose(
    players: int,
    *,
    shortfall: ShortfallRule = ShortfallRule.SMALLER_CLANS,
    variant: ThreeVariant = ThreeVariant.GENERALS_AND_DAIMYO,
    smaller_clans: Sequence[str] | None = None,
) -> Lineup:
    """R1: the roles per clan for ``players`` players.

    A count that is a multiple of 8 uses the table. Otherwise the judge either leaves the
    Shadowlands out (the other seven share the players; a remainder makes some clans
    smaller, as in (b)) or makes some clans one member smaller. ``smaller_clans`` names
    which clans are smaller; by default the last ones in the clan order, which the judge may
    change.
    """
    excluded: frozenset[str] = frozenset()
    clans = list(CLANS)
    if players % len(CLANS) and shortfall is ShortfallRule.EXCLUDE_SHADOWLANDS:
        excluded = frozenset({SHADOWLANDS})
        clans.remove(SHADOWLANDS)
    if players < len(clans) * MIN_PER_CLAN:
        raise LineupError(
            "players", f"{players} players are too few: every clan needs at least one General"
        )
    size = -(-players // len(clans))  # ceiling division
    if size > MAX_PER_CLAN:
        raise LineupError(
            "players",
            f"{players} players are too many: at most {MAX_PER_CLAN * len(clans)} "
            f"for {len(clans)} clans",
        )
    short = size * len(clans) - players
    if smaller_clans is None:
        chosen = clans[len(clans) - short :] if short else []
    else:
        chosen = list(smaller_clans)
        unknown = [c for c in chosen if c not in clans]
        if unknown:
            raise LineupError("smaller_clans", f'"{unknown[0]}" is not a clan in the game')
        if len(set(chosen)) != short:
            raise LineupError(
                "smaller_clans", f"{players} players need exactly {short} smaller clans"
            )
    lineup: dict[str, tuple[Role, ...]] = {}
    for clan in clans:
        roles = clan_roles(size, variant)
        if clan in chosen:
            roles = _one_fewer(roles)
        lineup[clan] = tuple(roles)
    return Lineup(clans=lineup, excluded_clans=excluded)


def lineup_check(roles: Sequence[Role]) -> str | None:
    """Why a clan's roles are not allowed (R1), or None when they are."""
    generals = roles.count(G)
    daimyo = roles.count(D)
    karo = roles.count(K)
    if generals < 1:
        return "a clan needs at least one General"
    if generals > 4:
        return "a clan has at most four Generals"
    if daimyo > 1 or karo > 1:
        return "a clan has at most one Daimyo and one Karo"
    if karo and not daimyo:
        return "a Karo serves a Daimyo: the clan has no Daimyo"
    return None


@dataclass(frozen=True, slots=True)
class Visibility:
    """What a member of a clan may see and do (R1.1). Judges see everything."""

    sees_all_armies: bool
    negotiates: bool
    gives_written_instructions: bool
    watches_battles: bool
    gives_orders: bool


def role_visibility(role: Role, clan_roles: Sequence[Role]) -> Visibility:
    """R1.1: the table of what each role sees, by the roles its clan has."""
    has_daimyo = D in clan_roles
    has_karo = K in clan_roles
    if role is G:
        return Visibility(
            sees_all_armies=not has_daimyo,
            negotiates=not has_daimyo,
            gives_written_instructions=False,
            watches_battles=True,
            gives_orders=True,
        )
    if role is D:
        return Visibility(
            sees_all_armies=True,
            negotiates=True,
            gives_written_instructions=not has_karo,
            watches_battles=not has_karo,
            gives_orders=False,
        )
    return Visibility(
        sees_all_armies=True,
        negotiates=False,
        gives_written_instructions=False,
        watches_battles=True,
        gives_orders=False,
    )


def public_display_shows_armies(lineup: Mapping[str, Sequence[Role]]) -> bool:
    """R1.1: the public display shows army positions only where no clan has a Daimyo."""
    return not any(D in roles for roles in lineup.values())


def general_visible_provinces(game_map: GameMap, province: str | None) -> frozenset[str]:
    """R1.1: a General under a Daimyo sees his army's province and the ones next to it."""
    if province is None:
        return frozenset()
    return frozenset({province}) | game_map.neighbours.get(province, frozenset())


@dataclass(frozen=True, slots=True)
class StartProblem:
    """Why a clan's declared starting provinces are not allowed (R3.2), as data: the
    adapters word it in the reader's language (``starting_positions_check`` in English).

    ``code`` is one of:

    - ``unknown_province``: ``provinces[index]`` (``province``) is not on the map;
    - ``not_home``: ``province`` is not a home province of the clan;
    - ``impassable``: ``province`` is a home province nothing may enter;
    - ``same_province``: ``province`` is declared for a second army;
    - ``too_many``: ``have`` armies for the clan's ``allowed`` home provinces;
    - ``castles_first``: a province without a castle is used while the castle home
      provinces in ``provinces`` are not.
    """

    code: str
    index: int | None = None
    province: str | None = None
    provinces: tuple[str, ...] = ()
    have: int = 0
    allowed: int = 0


def starting_positions_problems(
    game_map: GameMap,
    clan: str,
    provinces: Sequence[str],
    *,
    excluded_clans: frozenset[str] = frozenset(),
) -> list[StartProblem]:
    """R3.2: every problem with a clan's declared starting provinces (empty when allowed).

    Armies start in different home provinces of their clan, castle provinces first: a
    province without a castle may be used only once every castle home province is.
    """
    problems: list[StartProblem] = []
    homes = game_map.home_provinces.get(clan, ())
    blocked = game_map.blocked_provinces(excluded_clans)
    seen: set[str] = set()
    for i, pid in enumerate(provinces):
        code = None
        if pid not in game_map.provinces:
            code = "unknown_province"
        elif pid not in homes:
            code = "not_home"
        elif pid in blocked:
            code = "impassable"
        elif pid in seen:
            code = "same_province"
        if code is not None:
            problems.append(StartProblem(code, index=i, province=pid))
        seen.add(pid)
    if len(provinces) > len(homes):
        problems.append(StartProblem("too_many", have=len(provinces), allowed=len(homes)))
    castles = [pid for pid in homes if pid in game_map.castles and pid not in blocked]
    plain_used = [pid for pid in seen if pid in homes and pid not in game_map.castles]
    unused_castles = [pid for pid in castles if pid not in seen]
    if plain_used and unused_castles:
        problems.append(StartProblem("castles_first", provinces=tuple(unused_castles)))
    return problems


def start_problem_english(game_map: GameMap, clan: str, problem: StartProblem) -> str:
    """A ``StartProblem`` in English, as the engine's callers have always read it."""
    place = f"provinces[{problem.index}]"
    found = game_map.provinces.get(problem.province or "")
    name = found.name if found is not None else ""
    if problem.code == "unknown_province":
        return f'{place}: there is no province "{problem.province}"'
    if problem.code == "not_home":
        return f"{place}: {name} is not a {clan} home province"
    if problem.code == "impassable":
        return f"{place}: {name} is impassable"
    if problem.code == "same_province":
        return f"{place}: two armies may not start in the same province"
    if problem.code == "too_many":
        return f"{problem.have} armies but only {problem.allowed} home provinces"
    names = ", ".join(game_map.provinces[pid].name for pid in problem.provinces)
    return f"castle provinces first: {names} must be used before a province without a castle"


def starting_positions_check(
    game_map: GameMap,
    clan: str,
    provinces: Sequence[str],
    *,
    excluded_clans: frozenset[str] = frozenset(),
) -> list[str]:
    """R3.2: every problem with a clan's declared starting provinces, in English (empty
    when allowed); ``starting_positions_problems`` gives them as data."""
    return [
        start_problem_english(game_map, clan, problem)
        for problem in starting_positions_problems(
            game_map, clan, provinces, excluded_clans=excluded_clans
        )
    ]


@dataclass(frozen=True, slots=True)
class SeatingShortfall:
    """A clan the map cannot seat (R1, R3.2): its Generals, home provinces and castles."""

    clan: str
    generals: int
    homes: int
    castles: int

    def __str__(self) -> str:
        if self.homes < self.generals:
            return (
                f"the map gives the {self.clan} {self.homes} home provinces for "
                f"{self.generals} Generals: each army starts in a home province of its own "
                "(R1, R3.2)"
            )
        return (
            f"the map gives the {self.clan} no castle among their home provinces: armies "
            "start in castle provinces first (R3.2) and reform only in one (R9)"
        )


def lineup_seating_check(
    game_map: GameMap,
    generals: Mapping[str, int],
    *,
    excluded_clans: frozenset[str] = frozenset(),
) -> list[SeatingShortfall]:
    """R1, R3.2: the clans whose Generals the map cannot seat at the start (empty: all fit).

    Every General's army starts in a home province of its clan, one army to a province
    (R3.2), so a clan needs a passable home province for each General; and it needs a castle
    among them, where armies start first (R3.2) and where they reform (R9). ``generals``
    maps each clan in the game to its number of Generals; excluded clans are not seated.
    """
    blocked = game_map.blocked_provinces(excluded_clans)
    short: list[SeatingShortfall] = []
    for clan in CLANS:
        count = generals.get(clan, 0)
        if clan in excluded_clans or count < 1:
            continue
        homes = [p for p in game_map.home_provinces.get(clan, ()) if p not in blocked]
        castles = sum(1 for p in homes if p in game_map.castles)
        if len(homes) < count or castles < 1:
            short.append(SeatingShortfall(clan, count, len(homes), castles))
    return short


# --- R1 on registration: does a partial or complete line-up fit the count? --------------------


@dataclass(frozen=True, slots=True)
class LineupShape:
    """What R1 gives for a player count: the clans in the game, each clan's roles when full,
    the roles of a clan one member fewer (R1 b) and how many clans are that smaller."""

    players: int
    clans: tuple[str, ...]
    full: tuple[Role, ...]
    smaller: tuple[Role, ...]
    smaller_clans: int

    @property
    def full_clans(self) -> int:
        return len(self.clans) - self.smaller_clans

    def allowed(self, role: Role) -> int:
        """The most members of ``role`` any clan may have."""
        return self.full.count(role)


def lineup_shape(
    players: int,
    *,
    shortfall: ShortfallRule = ShortfallRule.SMALLER_CLANS,
    variant: ThreeVariant = ThreeVariant.GENERALS_AND_DAIMYO,
) -> LineupShape:
    """R1's line-up for ``players`` as a shape, whichever clans end up one member fewer.

    Raises ``LineupError`` for a count R1 cannot seat, as ``lineup_propose`` does.
    """
    proposed = lineup_propose(players, shortfall=shortfall, variant=variant)
    clans = tuple(proposed.clans)
    sizes = {len(roles) for roles in proposed.clans.values()}
    size = max(sizes)
    full = tuple(clan_roles(size, variant))
    smaller = tuple(_one_fewer(list(full)))
    short = size * len(clans) - players
    return LineupShape(players, clans, full, smaller, short)


@dataclass(frozen=True, slots=True)
class LineupProblem:
    """Why a line-up does not fit R1, as data: the adapters word it in the reader's language.

    ``code`` is one of:

    - ``not_in_game``: ``clan`` is not playing (R1 a left the Shadowlands out);
    - ``too_many``: ``clan`` has ``have`` of ``role`` where R1 gives at most ``allowed``;
    - ``full_clans``: with this count only ``allowed`` clans have ``len(shape.full)`` members
      (R1 b) and ``clans`` would make ``have``;
    - ``missing``: ``clan`` lacks ``allowed - have`` of ``role`` (complete line-ups only);
    - ``players``: ``have`` players are registered for a tournament of ``allowed``.
    """

    code: str
    clan: str | None = None
    role: Role | None = None
    have: int = 0
    allowed: int = 0
    clans: tuple[str, ...] = ()


def _fits(roles: Sequence[Role], target: Sequence[Role]) -> bool:
    """``roles`` is a sub-multiset of ``target``: what is registered is part of it."""
    return all(roles.count(role) <= target.count(role) for role in set(roles))


def lineup_admits(
    shape: LineupShape,
    registered: Mapping[str, Sequence[Role]],
    *,
    complete: bool = False,
) -> list[LineupProblem]:
    """R1: every reason ``registered`` (each clan's roles) is not, or cannot become, the
    line-up R1 gives; empty when it fits.

    While players are still being registered (``complete`` false) a clan may have fewer
    members than R1 gives, never a role R1 does not give or more of it, and no more clans
    may be full-sized than the count allows (R1 b: the others are one member fewer, whichever
    they are). ``complete`` also asks that every clan is exactly full or one fewer and that
    everyone is registered: the start (R3) needs the whole line-up.
    """
    problems: list[LineupProblem] = []
    for clan in sorted(set(registered) - set(shape.clans)):
        if registered[clan]:
            problems.append(LineupProblem("not_in_game", clan=clan))
    must_be_full: list[str] = []
    for clan in shape.clans:
        roles = list(registered.get(clan, ()))
        for role in Role:
            have, allowed = roles.count(role), shape.allowed(role)
            if have > allowed:
                problems.append(
                    LineupProblem("too_many", clan=clan, role=role, have=have, allowed=allowed)
                )
        if shape.smaller_clans and not _fits(roles, shape.smaller):
            must_be_full.append(clan)
    if len(must_be_full) > shape.full_clans:
        problems.append(
            LineupProblem(
                "full_clans",
                have=len(must_be_full),
                allowed=shape.full_clans,
                clans=tuple(must_be_full),
            )
        )
    if not complete or problems:
        return problems
    # Every clan fits the full roles and at most ``full_clans`` exceed the smaller ones, so
    # the registered count reaches the tournament's only when the line-up is exactly R1's.
    # Until then, say what each clan lacks; which clans are the smaller ones is free (R1 b),
    # so the full line-ups go to those already full, then to the largest, in clan order.
    full_left = shape.full_clans - len(must_be_full)
    by_size = sorted(
        (c for c in shape.clans if c not in must_be_full),
        key=lambda c: -len(registered.get(c, ())),
    )
    targets = {clan: shape.full for clan in must_be_full}
    for clan in by_size:
        if full_left > 0:
            targets[clan], full_left = shape.full, full_left - 1
        else:
            targets[clan] = shape.smaller
    for clan in shape.clans:
        roles = list(registered.get(clan, ()))
        for role in Role:
            have, wanted = roles.count(role), targets[clan].count(role)
            if have < wanted:
                problems.append(
                    LineupProblem("missing", clan=clan, role=role, have=have, allowed=wanted)
                )
    total = sum(len(roles) for roles in registered.values())
    if total != shape.players and not problems:
        problems.append(LineupProblem("players", have=total, allowed=shape.players))
    return problems


@dataclass(frozen=True, slots=True)
class LineupSeat:
    """One asked-for player placed by ``lineup_fill``: his clan and role, or why not."""

    clan: str | None
    role: Role | None
    problems: tuple[LineupProblem, ...] = ()
    proposed_clan: bool = False
    proposed_role: bool = False


def lineup_fill(
    shape: LineupShape,
    registered: Mapping[str, Sequence[Role]],
    wanted: Sequence[tuple[str | None, Role | None]],
) -> list[LineupSeat]:
    """R1: a clan and a role for each of ``wanted`` (either may be None: R1 proposes it),
    in order, on top of ``registered``; a seat that does not fit carries its problems and
    takes no place.

    A missing role is the clan's first one still open in R1's order (Generals, then the
    Daimyo, then the Karo); a missing clan is the one with the fewest members that can take
    the role, in clan order. What a line says is placed before what R1 would propose: the
    lines giving a clan and a role first, then those giving a clan, then a role, then the
    rest, each group in order, so that a line left to R1 never takes the place a later
    line asks for. The seats come back in the order of ``wanted``. The same input always
    gives the same seats.
    """
    roles_now: dict[str, list[Role]] = {c: list(r) for c, r in registered.items()}
    placed_at: dict[int, LineupSeat] = {}

    def admits(clan: str, role: Role) -> list[LineupProblem]:
        trial = {c: list(r) for c, r in roles_now.items()}
        trial.setdefault(clan, []).append(role)
        return lineup_admits(shape, trial)

    def open_role(clan: str) -> Role | None:
        for role in dict.fromkeys(shape.full):
            if not admits(clan, role):
                return role
        return None

    def said(index: int) -> int:
        clan, role = wanted[index]
        return 2 if clan is None else int(role is None)

    for index in sorted(range(len(wanted)), key=lambda i: (said(i), i)):
        clan, role = wanted[index]
        if clan is not None and clan not in shape.clans:
            placed_at[index] = LineupSeat(clan, role, (LineupProblem("not_in_game", clan=clan),))
            continue
        candidates = (
            [clan]
            if clan is not None
            else sorted(
                shape.clans, key=lambda c: (len(roles_now.get(c, ())), shape.clans.index(c))
            )
        )
        placed: LineupSeat | None = None
        for candidate in candidates:
            chosen = role if role is not None else open_role(candidate)
            if chosen is not None and not admits(candidate, chosen):
                placed = LineupSeat(candidate, chosen, (), clan is None, role is None)
                break
        if placed is None:
            seated = sum(len(r) for r in roles_now.values())
            if seated >= shape.players:
                problems: tuple[LineupProblem, ...] = (
                    LineupProblem("players", have=seated, allowed=shape.players),
                )
            else:
                # Why the clan asked for (or the first one tried) cannot take him.
                asked = role if role is not None else shape.full[0]
                problems = tuple(admits(candidates[0], asked))
            placed_at[index] = LineupSeat(clan, role, problems)
            continue
        assert placed.clan is not None and placed.role is not None
        roles_now.setdefault(placed.clan, []).append(placed.role)
        placed_at[index] = placed
    return [placed_at[index] for index in range(len(wanted))]


# --- R1 (b) at the start: a smaller line-up without the players who did not come -------------


@dataclass(frozen=True, slots=True)
class ShrinkSeat:
    """One player who stays, with his role before and after (a Karo may become a General)."""

    member: str
    before: Role
    after: Role

    @property
    def changed(self) -> bool:
        return self.before is not self.after


@dataclass(frozen=True, slots=True)
class LineupShrink:
    """The line-up without ``leaving``: every clan's members and their new roles, which
    staying member takes which leaving General's army, and why it does not fit R1, if not.

    ``armies`` maps a leaving General to the member promoted into his army; a leaving
    General missing from it leaves his army with nobody (it is taken off the board).
    """

    clans: Mapping[str, tuple[ShrinkSeat, ...]]
    leaving: tuple[str, ...]
    armies: Mapping[str, str]
    problems: tuple[LineupProblem, ...]

    @property
    def players(self) -> int:
        return sum(len(seats) for seats in self.clans.values())

    def roles(self) -> dict[str, list[Role]]:
        return {clan: [seat.after for seat in seats] for clan, seats in self.clans.items()}


_ROLE_ORDER: Final = (G, D, K)


def _clan_target(shape: LineupShape, size: int) -> tuple[Role, ...] | None:
    if size == len(shape.full):
        return shape.full
    if shape.smaller_clans and size == len(shape.smaller):
        return shape.smaller
    return None


def lineup_shrink(
    shape: LineupShape,
    members: Mapping[str, Sequence[tuple[str, Role]]],
    leaving: Sequence[str],
) -> LineupShrink:
    """R1 (b): the line-up ``shape`` gives once ``leaving`` are gone (players who did not
    come): a clan that loses a member drops its Karo first, then its Daimyo, then a General.

    ``members`` maps each clan to its (member, role) pairs, in the order the clan holds
    them. In a clan that loses someone, members keep their role while the clan's new roles
    have room for it (Generals first); the others take the roles left open, Generals first,
    so a Karo (or a Daimyo) steps into the army of a General who did not come. Clans that
    lose nobody are kept as they are. Pure: the same input always gives the same answer.
    """
    gone = set(leaving)
    clans: dict[str, tuple[ShrinkSeat, ...]] = {}
    armies: dict[str, str] = {}
    problems: list[LineupProblem] = []
    for clan, pairs in members.items():
        staying = [(m, r) for m, r in pairs if m not in gone]
        if len(staying) == len(pairs):
            clans[clan] = tuple(ShrinkSeat(m, r, r) for m, r in pairs)
            continue
        target = _clan_target(shape, len(staying))
        if target is None:
            # More than one member fewer than R1 gives: say what the clan lacks against
            # its smallest allowed line-up.
            clans[clan] = tuple(ShrinkSeat(m, r, r) for m, r in staying)
            kept = [r for _, r in staying]
            for role in _ROLE_ORDER:
                have, wanted = kept.count(role), shape.smaller.count(role)
                if have < wanted:
                    problems.append(
                        LineupProblem("missing", clan=clan, role=role, have=have, allowed=wanted)
                    )
            continue
        room = {role: target.count(role) for role in _ROLE_ORDER}
        after: dict[str, Role] = {}
        for role in _ROLE_ORDER:
            for member, held in staying:
                if held is role and room[role] > 0:
                    after[member] = role
                    room[role] -= 1
        open_roles = [role for role in _ROLE_ORDER for _ in range(room[role])]
        # The highest role left unfilled goes to the highest-ranked member without one.
        unplaced = sorted(
            (m for m, _ in staying if m not in after),
            key=lambda m: _ROLE_ORDER.index(dict(staying)[m]),
        )
        for member, role in zip(unplaced, open_roles, strict=True):
            after[member] = role
        clans[clan] = tuple(ShrinkSeat(m, r, after[m]) for m, r in staying)
        heirs = [m for m, r in staying if r is not G and after[m] is G]
        left_generals = [m for m, r in pairs if m in gone and r is G]
        for general, heir in zip(left_generals, heirs, strict=False):
            armies[general] = heir
    plan = LineupShrink(clans, tuple(m for m in leaving), armies, ())
    if not problems:
        problems.extend(lineup_admits(shape, plan.roles(), complete=True))
    return LineupShrink(clans, plan.leaving, armies, tuple(problems))
