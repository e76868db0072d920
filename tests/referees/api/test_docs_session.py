"""/api/docs ("Try it out") works with a signed-in judge's browser session, CSRF and all.

Swagger UI sends the token ninja's page carries (``data-csrf-token``) as ``X-CSRFToken`` on
every request (ninja's static/ninja/swagger-ui-init.js), with the browser's cookies. These
tests send exactly that, and check that a request from another site still fails.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client

from tests.referees.conftest import JUDGE_PASSWORD, Api, Game

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser() -> Client:
    """A browser: Django's CSRF checks on, as they are for a real one."""
    return Client(enforce_csrf_checks=True)


def sign_in(browser: Client) -> None:
    """Through the site's sign-in page, as a judge does (its form's own CSRF token)."""
    page = browser.get("/accounts/sign-in/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token
    response = browser.post(
        "/accounts/sign-in/",
        {"username": "judge", "password": JUDGE_PASSWORD, "csrfmiddlewaretoken": token.group(1)},
    )
    assert response.status_code == 302


def swagger_token(browser: Client) -> str:
    """The token the docs page hands Swagger UI; asserts that Swagger will send it."""
    response = browser.get("/api/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-api-csrf="true"' in html
    found = re.search(r'data-csrf-token="([^"]+)"', html)
    assert found, "the docs page gives Swagger UI no CSRF token"
    assert "csrftoken" in browser.cookies
    return found.group(1)


def pause(game: Game) -> str:
    return f"/tournaments/{game.id}/clock/pause"


def test_try_it_out_posts_with_the_judges_session(browser: Client, game16: Game) -> None:
    sign_in(browser)
    token = swagger_token(browser)

    response = Api(browser).post(pause(game16), headers={"X-CSRFToken": token})

    assert response.status_code == 200, response.content
    assert game16.refresh().paused


def test_the_csrftoken_cookie_works_as_the_header_too(browser: Client, game16: Game) -> None:
    sign_in(browser)
    swagger_token(browser)

    cookie = browser.cookies["csrftoken"].value
    response = Api(browser).post(pause(game16), headers={"X-CSRFToken": cookie})

    assert response.status_code == 200, response.content


def test_a_cross_site_post_on_the_session_is_still_refused(browser: Client, game16: Game) -> None:
    """Another site can make the browser send the cookies, never the token: 403 ``csrf``."""
    sign_in(browser)
    swagger_token(browser)

    forged = Api(browser).post(pause(game16), headers={"Origin": "https://evil.example"})
    wrong = Api(browser).post(pause(game16), headers={"X-CSRFToken": "b" * 32})

    for response in (forged, wrong):
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "csrf"
    assert not game16.refresh().paused


def test_a_token_from_another_origin_is_refused(browser: Client, game16: Game) -> None:
    """The right token is not enough from another origin (Django's Origin check)."""
    sign_in(browser)
    token = swagger_token(browser)

    response = Api(browser).post(
        pause(game16), headers={"X-CSRFToken": token, "Origin": "https://evil.example"}
    )

    assert response.status_code == 403
    assert not game16.refresh().paused


def test_the_docs_page_for_a_stranger_still_works(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    """Anyone may read the docs; without a session, "Try it out" is answered 401."""
    html = client.get("/api/docs").content.decode()

    assert 'id="swagger-ui"' in html
    assert Api(client).post("/tournaments/1/clock/pause").status_code == 401
