"""Under ``Accept-Language: ru`` the API's validation messages and the sign-in page are Russian.

The API's 422 (pydantic's checks, through ``sl5r/api.py``) keeps its codes, error types and
field names in English and says the rest in Russian; English stays pydantic's own text. The
sign-in page is Django's admin login, whose Russian comes from Django's own catalog.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from tests.referees.conftest import (  # noqa: F401  (fixtures)
    JUDGE_PASSWORD,
    _clear_cache,
    judge_key,
    judge_user,
)

CYRILLIC = re.compile(r"[А-Яа-яЁё]")


def post(client: Client, path: str, body: Any, language: str, token: str | None = None) -> Any:
    headers = {"HTTP_ACCEPT_LANGUAGE": language}
    if token:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client.post(path, body, content_type="application/json", **headers)


@pytest.mark.django_db
def test_a_missing_field_and_a_wrong_type_are_refused_in_russian(client: Client) -> None:
    missing = post(client, "/api/join", {}, "ru")
    wrong_type = post(client, "/api/join", {"token": 5}, "ru")

    assert missing.status_code == wrong_type.status_code == 422
    assert missing.json()["code"] == "validation"
    assert missing.json()["errors"] == [
        {"field": "token", "message": "Обязательное поле", "type": "missing"}
    ]
    assert missing.json()["detail"] == "token: Обязательное поле"
    assert wrong_type.json()["errors"] == [
        {"field": "token", "message": "Ожидается строка", "type": "string_type"}
    ]


@pytest.mark.django_db
def test_ranges_lengths_and_choices_are_refused_in_russian(
    client: Client,
    judge_key: str,  # noqa: F811
) -> None:
    body = {"name": "", "player_count": "many", "battle_game": "chess"}

    response = post(client, "/api/tournaments", body, "ru", token=judge_key)
    too_few = post(client, "/api/tournaments", {"name": "x", "player_count": 0}, "ru", judge_key)

    assert response.status_code == 422, response.content
    messages = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert messages["name"] == "Строка должна быть не короче 1 символа"
    assert messages["player_count"] == "Ожидается целое число, а строку нельзя прочесть как число"
    assert messages["battle_game"] == "Ожидается 'l5r' или 'bushido'"
    assert all(CYRILLIC.search(m) for m in messages.values()), messages
    assert too_few.status_code == 422
    assert too_few.json()["detail"] == "player_count: Значение должно быть не меньше 1"


@pytest.mark.django_db
def test_an_unknown_time_zone_is_refused_in_russian(
    client: Client,
    judge_key: str,  # noqa: F811
) -> None:
    body = {"name": "x", "player_count": 16, "time_zone": "Mars/Olympus"}

    response = post(client, "/api/tournaments", body, "ru", token=judge_key)

    assert response.status_code == 422, response.content
    messages = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert messages["time_zone"] == (
        "неизвестный часовой пояс «Mars/Olympus» (например, Europe/Moscow)"
    )


@pytest.mark.django_db
def test_english_keeps_pydantics_own_words(client: Client) -> None:
    response = post(client, "/api/join", {"token": 5}, "en")

    assert response.json()["errors"][0]["message"] == "Input should be a valid string"


@pytest.mark.django_db
def test_the_sign_in_page_is_in_russian(client: Client, judge_user: Any) -> None:  # noqa: F811
    page = client.get("/admin/login/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    wrong = client.post(
        "/admin/login/",
        {"username": "judge", "password": "wrong-" + JUDGE_PASSWORD},
        HTTP_ACCEPT_LANGUAGE="ru",
    ).content.decode()
    empty = client.post(
        "/admin/login/", {"username": "", "password": ""}, HTTP_ACCEPT_LANGUAGE="ru"
    ).content.decode()

    assert '<html lang="ru"' in page
    assert "Имя пользователя" in page and "Пароль" in page and "Войти" in page
    assert "Пожалуйста, введите корректные имя пользователя и пароль" in wrong
    assert "Обязательное поле." in empty
    for html in (page, wrong, empty):
        assert "Username" not in html and "Password" not in html and "Log in" not in html
