"""The site's own sign-in and sign-out pages, and the judges' part of every page's header."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client, override_settings
from django.urls import reverse

from tests.referees.conftest import JUDGE_PASSWORD, Game

pytestmark = pytest.mark.django_db

SIGN_IN = "/accounts/sign-in/"
SIGN_OUT = "/accounts/sign-out/"


def signed_in_user(client: Client) -> Any:
    """The user the client's session stands for (an anonymous user when none)."""
    return client.get(reverse("home")).wsgi_request.user


@pytest.fixture
def rate_window_still() -> Iterator[None]:
    """The limiter's clock stands still, so a test's attempts share one window."""
    with mock.patch("referees.http.ratelimit.time.time", return_value=1_000_000.0):
        yield


def test_the_sign_in_page_is_the_sites_own(client: Client) -> None:
    response = client.get(SIGN_IN)

    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("sign_in") == SIGN_IN
    assert 'class="site-header"' in html  # the site's layout, not the admin's
    assert 'name="username"' in html and 'name="password"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert '<meta name="viewport"' in html


def test_the_right_password_signs_in_and_lands_on_the_judge_home(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    response = client.post(SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == reverse("referees:judge_home")
    assert signed_in_user(client).pk == judge_user.pk


def test_sign_in_goes_back_to_the_page_that_asked_for_it(client: Client, game16: Game) -> None:
    console = reverse("referees:judge", args=[game16.id])

    response = client.post(
        SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD, "next": console}
    )

    assert response["Location"] == console
    assert client.get(console).status_code == 200


def test_the_sign_in_form_carries_the_page_that_asked_for_it(client: Client, game16: Game) -> None:
    """The console sends a stranger to ``/accounts/sign-in/?next=…``; the form must post
    that page back (its hidden field had no name, and every judge landed on his home)."""
    console = reverse("referees:judge", args=[game16.id])
    html = client.get(f"{SIGN_IN}?next={console}").content.decode()
    form = re.search(r'<form [^>]*class="stacked-form".*?</form>', html, re.DOTALL)
    assert form, html
    assert f'<input type="hidden" name="next" value="{console}">' in form.group(0)


def test_sign_in_never_sends_the_judge_to_another_site(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    response = client.post(
        SIGN_IN,
        {"username": "judge", "password": JUDGE_PASSWORD, "next": "https://evil.example/"},
    )

    assert response["Location"] == reverse("referees:judge_home")


def test_a_wrong_password_is_said_on_the_form(client: Client, judge_user: AbstractBaseUser) -> None:
    response = client.post(SIGN_IN, {"username": "judge", "password": "not-the-password"})

    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="form-errors"' in html
    assert "Please enter a correct username and password" in html
    assert 'value="judge"' in html  # the name typed stays in the form
    assert not signed_in_user(client).is_authenticated


def test_an_unknown_user_is_told_the_same_as_a_wrong_password(client: Client, db: None) -> None:
    response = client.post(SIGN_IN, {"username": "nobody", "password": "whatever-1"})

    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_empty_fields_are_named(client: Client, db: None) -> None:
    response = client.post(SIGN_IN, {"username": "", "password": ""})

    assert response.status_code == 200
    assert response.content.decode().count('class="field-error"') == 2


def test_an_inactive_account_cannot_sign_in(client: Client, judge_user: AbstractBaseUser) -> None:
    judge_user.is_active = False
    judge_user.save()

    response = client.post(SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD})

    assert response.status_code == 200
    assert not signed_in_user(client).is_authenticated


def test_sign_in_needs_the_csrf_token(judge_user: AbstractBaseUser) -> None:
    client = Client(enforce_csrf_checks=True)

    response = client.post(SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD})

    assert response.status_code == 403
    assert not signed_in_user(client).is_authenticated


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"sign_ins": "2/min"})
def test_too_many_wrong_passwords_from_one_address_are_429(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    """Once an address has failed the limit, even the right password waits for the window."""
    for attempt in ("wrong-1", "wrong-2"):
        assert client.post(SIGN_IN, {"username": "judge", "password": attempt}).status_code == 200

    response = client.post(SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD})

    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert "Too many wrong passwords" in response.content.decode()
    assert not signed_in_user(client).is_authenticated
    other_address = client.post(
        SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD}, REMOTE_ADDR="10.0.0.9"
    )
    assert other_address.status_code == 302


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"sign_ins": "1/min"})
def test_good_sign_ins_and_empty_forms_are_not_counted(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    for _ in range(3):
        assert client.post(SIGN_IN, {"username": "", "password": ""}).status_code == 200
        good = client.post(SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD})
        assert good.status_code == 302
        client.post(SIGN_OUT)


def test_sign_out_is_a_post_and_lands_on_the_public_home(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    client.force_login(judge_user)

    assert client.get(SIGN_OUT).status_code == 405  # a link elsewhere cannot sign one out
    assert signed_in_user(client).is_authenticated
    response = client.post(SIGN_OUT)

    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    assert not signed_in_user(client).is_authenticated


def test_sign_out_needs_the_csrf_token(judge_user: AbstractBaseUser) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(judge_user)

    assert client.post(SIGN_OUT).status_code == 403
    assert signed_in_user(client).is_authenticated


def test_the_console_sends_a_stranger_to_the_sites_sign_in(client: Client, game16: Game) -> None:
    console = reverse("referees:judge", args=[game16.id])

    response = client.get(console)

    assert response.status_code == 302
    assert response["Location"] == f"{SIGN_IN}?next={console}"


# --- The header ------------------------------------------------------------------------------


def header(html: str) -> str:
    found = re.search(r'<header class="site-header">(.*?)</header>', html, re.DOTALL)
    assert found, "no site header"
    return found.group(1)


def test_the_header_offers_a_stranger_the_judge_sign_in(client: Client, db: None) -> None:
    top = header(client.get(reverse("home")).content.decode())

    assert f'href="{SIGN_IN}"' in top
    assert "Judge sign-in" in top
    assert "Sign out" not in top
    assert 'action="/i18n/setlang/"' in top  # the language switch stays


def test_the_header_of_a_signed_in_judge(client: Client, judge_user: AbstractBaseUser) -> None:
    client.force_login(judge_user)

    top = header(client.get(reverse("strategic_map:map", args=["nowhere"])).content.decode())

    assert f'href="{reverse("referees:judge_home")}"' in top
    assert "judge" in top  # his user name
    sign_out = re.search(
        r'<form class="sign-out" action="([^"]+)" method="post">(.*?)</form>', top, re.DOTALL
    )
    assert sign_out and sign_out.group(1) == SIGN_OUT
    assert 'name="csrfmiddlewaretoken"' in sign_out.group(2)
    assert f'href="{SIGN_IN}"' not in top
    assert 'action="/i18n/setlang/"' in top


def test_only_a_superuser_sees_the_admin_link(
    client: Client, judge_user: AbstractBaseUser, django_user_model: Any
) -> None:
    """A judge may view nothing in the admin (it is the administrator's): no link to it."""
    client.force_login(judge_user)
    assert 'href="/admin/"' not in header(client.get(reverse("home")).content.decode())

    admin = django_user_model.objects.create_superuser(username="root", password="root-pass-1")
    client.force_login(admin)
    assert 'href="/admin/"' in header(client.get(reverse("home")).content.decode())


def test_the_sign_in_page_in_russian(client: Client, judge_user: AbstractBaseUser) -> None:
    """Russian renders the same page; the wrong-password message comes from Django's catalog."""
    page = client.get(SIGN_IN, headers={"accept-language": "ru"})
    wrong = client.post(
        SIGN_IN,
        {"username": "judge", "password": "wrong"},
        headers={"accept-language": "ru"},
    )

    assert page.status_code == 200
    assert '<html lang="ru">' in page.content.decode()
    assert 'name="username"' in page.content.decode()
    html = wrong.content.decode()
    assert '<html lang="ru">' in html
    assert 'class="form-errors"' in html
    assert "Please enter a correct" not in html


def test_a_signed_in_judge_visiting_the_sign_in_page_is_told_who_he_is(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    client.force_login(judge_user)

    html = client.get(SIGN_IN).content.decode()

    assert "You are signed in as judge." in html
    assert f'href="{reverse("referees:judge_home")}"' in html


ADMIN_SIGN_IN = "/admin/login/"


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"sign_ins": "2/min"})
def test_the_admin_sign_in_counts_wrong_passwords_with_the_sites(
    client: Client, django_user_model: Any
) -> None:
    """Issue 29: /admin/login/ answered 200 to 115 wrong passwords, then let the right one
    in. Both doors share one count: changing doors gains a guesser nothing."""
    django_user_model.objects.create_superuser(username="root", password="root-password-1")
    assert client.post(SIGN_IN, {"username": "root", "password": "wrong-1"}).status_code == 200
    answer = client.post(ADMIN_SIGN_IN, {"username": "root", "password": "wrong-2"})
    assert answer.status_code == 200
    assert "Please enter the correct username and password" in answer.content.decode()

    refused = client.post(ADMIN_SIGN_IN, {"username": "root", "password": "root-password-1"})

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert not signed_in_user(client).is_authenticated
    elsewhere = client.post(
        ADMIN_SIGN_IN, {"username": "root", "password": "root-password-1"}, REMOTE_ADDR="10.0.0.9"
    )
    assert elsewhere.status_code == 302
    assert elsewhere["Location"] == "/admin/"


def test_the_admin_sign_in_is_still_the_admins_page_for_staff_only(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    page = client.get(ADMIN_SIGN_IN)
    assert page.status_code == 200
    assert 'id="login-form"' in page.content.decode()
    # A judge is not staff: his right password does not open the admin.
    answer = client.post(ADMIN_SIGN_IN, {"username": "judge", "password": JUDGE_PASSWORD})
    assert answer.status_code == 200
    assert not signed_in_user(client).is_authenticated
