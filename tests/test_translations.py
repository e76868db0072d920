"""The Russian translation: complete, compiled, current, and what the pages show.

The catalog checks read ``locale/ru/LC_MESSAGES/django.po`` with a small parser of their own
(no polib) and the compiled ``django.mo`` with :mod:`gettext`, so they need no GNU gettext.
Where gettext is installed, ``msgfmt`` cross-checks the catalog, and ``makemessages`` run on
a copy of the sources shows that no translatable string is missing from the catalog.
"""

from __future__ import annotations

import gettext
import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone, translation

from referees import services
from referees.pages.history import _label_turn, _rejection_text
from referees.services import OrderInput
from tests.referees.conftest import (  # noqa: F401  (fixtures used by the page tests)
    Game,
    game16,
    judge_user,
    make_game,
    rokugan,
)

BASE = Path(settings.BASE_DIR)
LOCALE = BASE / "locale" / "ru" / "LC_MESSAGES"
PO = LOCALE / "django.po"
MO = LOCALE / "django.mo"
# The placeholders a translation must keep: %(name)s, %s, {name}, and inline markup.
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]|\{\w+\}|<[^>]+>")
RU_PLURALS = (
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : "
    "n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"
)
MAKEMESSAGES_IGNORES = (
    ".venv",
    "tests",
    "sl5r/rules",
    "docs",
    "benchmarks",
    "staticfiles",
    "artifacts",
)


# --- Reading the catalog -----------------------------------------------------------------------


@dataclass
class Entry:
    msgid: str
    msgctxt: str | None = None
    msgid_plural: str | None = None
    msgstr: str = ""
    plurals: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        return f"{self.msgctxt}\x04{self.msgid}" if self.msgctxt is not None else self.msgid

    @property
    def translations(self) -> list[str]:
        if self.msgid_plural is None:
            return [self.msgstr]
        return [self.plurals[n] for n in sorted(self.plurals)]


ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _unquote(text: str) -> str:
    text = text.strip()
    assert text.startswith('"') and text.endswith('"'), f"not a PO string: {text!r}"
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), "\\" + m.group(1)), text[1:-1])


def read_po(path: Path) -> list[Entry]:
    """The entries of a PO file (the header first); obsolete ``#~`` entries are left out."""
    entries: list[Entry] = []
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines or all(line.startswith("#") for line in lines):
            continue
        flags: set[str] = set()
        fields: dict[str, str] = {}
        current = ""
        for line in lines:
            if line.startswith("#,"):
                flags |= {flag.strip() for flag in line[2:].split(",") if flag.strip()}
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                fields[current] += _unquote(line)
            else:
                keyword, _, rest = line.partition(" ")
                current = keyword
                fields[current] = _unquote(rest)
        entry = Entry(
            msgid=fields["msgid"],
            msgctxt=fields.get("msgctxt"),
            msgid_plural=fields.get("msgid_plural"),
            msgstr=fields.get("msgstr", ""),
            flags=flags,
        )
        for keyword, value in fields.items():
            found = re.fullmatch(r"msgstr\[(\d+)\]", keyword)
            if found:
                entry.plurals[int(found.group(1))] = value
        entries.append(entry)
    assert entries and entries[0].msgid == "", "the catalog starts with its header"
    return entries


def po_catalog(entries: list[Entry]) -> dict[Any, str]:
    """The entries as gettext's ``_catalog`` holds them (plural forms keyed ``(msgid, n)``)."""
    catalog: dict[Any, str] = {}
    for entry in entries:
        if entry.msgid_plural is None:
            catalog[entry.key] = entry.msgstr
        else:
            for n, text in entry.plurals.items():
                catalog[(entry.key, n)] = text
    return catalog


def mo_catalog(path: Path) -> dict[Any, str]:
    with path.open("rb") as compiled:
        found: dict[Any, str] = gettext.GNUTranslations(compiled)._catalog  # type: ignore[attr-defined]
        return found


def header_field(entries: list[Entry], name: str) -> str:
    for line in entries[0].msgstr.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    raise AssertionError(f"no {name} in the catalog's header")


@pytest.fixture(scope="module")
def entries() -> list[Entry]:
    return read_po(PO)


# --- The catalog ----------------------------------------------------------------------------------


def test_every_message_is_translated_and_none_is_fuzzy(entries: list[Entry]) -> None:
    messages = entries[1:]
    untranslated = [e.msgid for e in messages if not all(t.strip() for t in e.translations)]
    fuzzy = [e.msgid or "(header)" for e in entries if "fuzzy" in e.flags]

    assert len(messages) > 400
    assert untranslated == []
    assert fuzzy == []


def test_the_header_has_russian_plural_forms(entries: list[Entry]) -> None:
    assert header_field(entries, "Language") == "ru"
    assert header_field(entries, "Plural-Forms") == RU_PLURALS
    assert "charset=UTF-8" in header_field(entries, "Content-Type")
    for entry in entries[1:]:
        if entry.msgid_plural is not None:
            assert sorted(entry.plurals) == [0, 1, 2], entry.msgid


def test_translations_keep_every_placeholder(entries: list[Entry]) -> None:
    for entry in entries[1:]:
        wanted = sorted(PLACEHOLDER.findall(entry.msgid_plural or entry.msgid))
        for text in entry.translations:
            assert sorted(PLACEHOLDER.findall(text)) == wanted, (entry.msgid, text)


def test_the_community_terms_are_used(entries: list[Entry]) -> None:
    """The glossary of rules.md (seed 003): the clans and the roles as the players say them."""
    by_id = {e.msgid: e.msgstr for e in entries}
    assert by_id["Shadowlands"] == "Теневые Земли"
    assert by_id["Crane"] == "Журавль"
    assert by_id["Daimyo"] == "Даймё"
    assert by_id["Karo"] == "Каро"
    assert by_id["General"] == "Генерал"
    assert by_id["Strategic map"] == "Стратегическая карта"


def test_the_compiled_catalog_matches_the_po_file(entries: list[Entry]) -> None:
    """django.mo holds exactly the translations of django.po: it was compiled after the
    last change (``make messages``)."""
    compiled = mo_catalog(MO)
    expected = po_catalog(entries)

    assert {k: v for k, v in compiled.items() if k != ""} == {
        k: v for k, v in expected.items() if k != ""
    }


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext (msgfmt) is not installed")
def test_msgfmt_counts_no_untranslated_or_fuzzy_message(
    tmp_path: Path, entries: list[Entry]
) -> None:
    compiled = tmp_path / "django.mo"
    result = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", str(compiled), str(PO)],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C", "LANGUAGE": "C"},
        check=False,
    )

    assert result.returncode == 0, result.stderr
    statistics = result.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ translated messages?\.", statistics), statistics
    assert int(statistics.split()[0]) == len(entries) - 1
    assert mo_catalog(compiled) == mo_catalog(MO)


@pytest.mark.skipif(
    shutil.which("xgettext") is None or shutil.which("msgmerge") is None,
    reason="GNU gettext (xgettext, msgmerge) is not installed",
)
def test_the_catalog_has_every_string_of_the_sources(tmp_path: Path, entries: list[Entry]) -> None:
    """``makemessages`` (as ``make messages`` runs it) on a copy of the sources finds no
    message that the catalog lacks, and none that the sources no longer have."""
    copy = tmp_path / "site"
    copy.mkdir()
    shutil.copy2(BASE / "manage.py", copy / "manage.py")
    for folder in ("sl5r", "referees", "strategic_map", "battles", "templates", "locale"):
        shutil.copytree(BASE / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    command = [sys.executable, "manage.py", "makemessages", "-l", "ru", "--no-location"]
    command += [f"--ignore={path}" for path in MAKEMESSAGES_IGNORES]
    # The copy has no tests package, so pytest's tests.settings cannot be its settings.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "sl5r.settings"}
    result = subprocess.run(command, cwd=copy, capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, result.stderr

    fresh = read_po(copy / "locale" / "ru" / "LC_MESSAGES" / "django.po")
    assert {e.key for e in fresh} == {e.key for e in entries}
    assert [e.msgid for e in fresh if "fuzzy" in e.flags] == []


# --- The pages in Russian -------------------------------------------------------------------------


def english_left(page: str, entries: list[Entry]) -> list[str]:
    """Messages of three words or more that a Russian page still shows in English."""
    text = html.unescape(page)
    return [
        e.msgid
        for e in entries[1:]
        if len(e.msgid.split()) >= 3 and _words(e.msgid) and "<" not in e.msgid and e.msgid in text
    ]


def _words(msgid: str) -> list[str]:
    """The English words of a message: "%(name)s (%(role)s, %(clan)s)" has none to translate."""
    return re.findall(r"[A-Za-z]{2,}", re.sub(r"%\(\w+\)[sd]|\{\w+\}", "", msgid))


def json_script(page: str, element_id: str) -> Any:
    found = re.search(
        rf'<script id="{element_id}" type="application/json">(.*?)</script>', page, re.S
    )
    assert found, f"no #{element_id} in the page"
    return json.loads(found.group(1))


def in_russian(client: Client) -> Client:
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "ru"
    return client


def test_the_home_page_follows_a_russian_browser(client: Client, db: None) -> None:
    page = client.get("/", headers={"accept-language": "ru"}).content.decode()

    assert '<html lang="ru">' in page
    assert "Судья SL5R" in page
    assert "Судья турниров по Стратегической Легенде Пяти Колец." in page
    assert "SL5R Referee" not in page


def test_the_big_screen_is_in_russian(
    client: Client,
    game16: Game,  # noqa: F811
    entries: list[Entry],
) -> None:
    response = in_russian(client).get(f"/referees/tournaments/{game16.id}/screen/")

    assert response.status_code == 200
    page = response.content.decode()
    assert '<html lang="ru">' in page
    assert "Большой экран" in page
    assert "Объявления" in page
    assert "Объявлений пока нет." in page
    assert "Итоговая таблица" in page
    assert "Стратегическая карта" in page
    assert 'data-name="Теневые Земли"' in page  # the clans' names on the map
    assert english_left(page, entries) == []
    config = json_script(page, "screen-config")
    assert config["strings"]["turn"] == "Ход"
    assert config["strings"]["final_standings"] == "Итоговая таблица"
    assert config["phases"]["running"] == "идут ходы"
    assert {clan["name"] for clan in config["clans"]} >= {"Краб", "Журавль", "Единорог"}


def test_a_generals_page_is_in_russian(
    client: Client,
    game16: Game,  # noqa: F811
    entries: list[Entry],
) -> None:
    general = game16.player("crab")
    in_russian(client)
    assert client.get(f"/join/{game16.token(general)}").status_code == 302

    response = client.get(f"/referees/tournaments/{game16.id}/general/")

    assert response.status_code == 200
    page = response.content.decode()
    assert '<html lang="ru">' in page
    assert "Генерал клана Краб" in page
    assert general.army is not None
    assert f"Ваша армия: {general.army.code}" in page
    assert "Ваш приказ на этот ход" in page
    assert "Отправить приказ" in page
    assert "Стоять на месте" in page
    assert '<h2 id="map-heading">Карта</h2>' in page
    # The texts its scripts show come translated in the page too.
    assert 'data-live-connecting="Подключение…"' in page
    assert 'data-order-move="Переместиться в {path}"' in page
    assert (
        'data-reason-not-unicorn="только армия Единорога может переместиться на две провинции"'
        in page
    )
    assert english_left(page, entries) == []


def test_the_judge_console_is_in_russian(
    client: Client,
    game16: Game,  # noqa: F811
    entries: list[Entry],
) -> None:
    client.force_login(game16.judge)

    response = in_russian(client).get(f"/referees/tournaments/{game16.id}/judge/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Пульт судьи" in page
    assert "Завершить этот ход сейчас" in page
    assert "переформирование" in page  # the order kinds of the order form
    assert english_left(page, entries) == []
    config = json_script(page, "judge-config")
    assert config["roles"] == {"general": "Генерал", "daimyo": "Даймё", "karo": "Каро"}
    assert config["logActions"]["turn_resolved"] == "ход завершён"
    assert (
        config["strings"]["confirm_resolve"] == "Завершить ход %(turn)s сейчас и выполнить приказы?"
    )


def test_the_history_of_a_turn_is_in_russian(
    client: Client,
    game16: Game,  # noqa: F811
    entries: list[Entry],
) -> None:
    army = game16.player("crab").army
    assert army is not None
    services.order_enter(
        tournament_id=game16.id,
        army_code=army.code,
        order=OrderInput(kind="move", path=("shinomen-mori",)),
        actor=game16.judge_actor,
        now=timezone.now(),
    )
    services.clock_resolve_now(
        tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now()
    )

    response = in_russian(client).get(f"/referees/tournaments/{game16.id}/history/?turn=1")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Ход 1: итоги" in page
    assert "Приказы и их исполнение" in page
    assert "перемещение в Shinomen Mori" in page
    assert "переместилась" in page
    assert english_left(page, entries) == []


def test_a_rejected_orders_reason_is_shown_in_the_readers_language() -> None:
    reason = "not_unicorn: only a Unicorn army may move two provinces"

    with translation.override("ru"):
        assert (
            _rejection_text(reason) == "только армия Единорога может переместиться на две провинции"
        )
        assert _rejection_text("mystery: something new") == "mystery: something new"
    with translation.override("en"):
        assert _rejection_text(reason) == "only a Unicorn army may move two provinces"
    assert _rejection_text(None) is None


def test_a_scorpions_choice_on_a_swap_is_shown_in_the_readers_language() -> None:
    draw = {
        "provinces": ["a", "b"],
        "moving_from": "b",
        "method": "scorpion",
        "armies": ["scorpion-1"],
        "on_swap": "stay",
    }
    turn: dict[str, Any] = {
        "orders": [],
        "draws": [draw],
        "meetings": [],
        "reinforcements": [],
        "control_changes": [],
    }

    with translation.override("ru"):
        _label_turn(turn, {"a": "A", "b": "B"})

    assert draw["on_swap_label"] == "остаться"
    assert draw["method_label"] == "выбор Скорпиона"


def test_an_api_refusal_is_in_the_callers_language(client: Client, db: None) -> None:
    """The API's own refusals follow Accept-Language as the pages do."""
    response = client.post(
        "/api/join",
        b"[1, 2]",
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="ru",
    )

    assert response.status_code == 422
    assert response.json()["detail"] == (
        "тело запроса должно быть объектом JSON (получено: массив)"
    )
