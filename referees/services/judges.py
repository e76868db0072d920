"""A tournament's judges and their API keys: who may run it, and how a new judge gets in.

A judge adds another judge to his tournament (an existing account, by user name), or invites
a new one: the account is made without a password and its owner signs in once with a link
that the inviting judge shows him (on screen, as a QR code), then chooses a password. The
link is Django's password-reset token under its own salt (``WelcomeLinkTokens``): nothing is
stored, it stops working once the account has signed in or set a password, and it expires
after ``PASSWORD_RESET_TIMEOUT``. A tournament always keeps at least one judge.

Who may hand out a sign-in link for an account (docs/deployment.md, "Judges"): only the
judges of the one tournament that a passwordless account judges. An account is added to
another tournament only once it has a password, so that adding someone never gives the
adder a way in as him; a superuser resets a password with ``manage.py createjudge``.

Every change is a line in the tournament's log (R11), which never holds a link or a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import ValidationError
from django.db.models import Field
from django.urls import reverse
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode
from django.utils.translation import gettext as _

from referees.kernel.access import IssuedKey, judge_key_create
from referees.kernel.core import (
    Actor,
    log_write,
    record_changed,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.kernel.names import name_checked
from referees.models import JudgeKey, Tournament

MAX_KEY_LABEL = 120


class WelcomeLinkTokens(PasswordResetTokenGenerator):
    """One-time sign-in links for invited judges.

    Its own salt, so that a token made for one purpose never passes for another. The hash
    covers the password and the last sign-in, so the link is dead once used.
    """

    key_salt = "referees.services.judges.WelcomeLinkTokens"


welcome_tokens = WelcomeLinkTokens()


@dataclass(frozen=True)
class JudgeInvitation:
    """A new judge's account and his one-time sign-in link (shown once, never stored)."""

    user: User
    uidb64: str
    token: str

    @property
    def path(self) -> str:
        return reverse("judge_welcome", kwargs={"uidb64": self.uidb64, "token": self.token})


# --- Reading ----------------------------------------------------------------------------------


def tournament_judges(*, tournament: Tournament) -> list[User]:
    """The tournament's judges, by user name."""
    user_model = get_user_model()
    return list(tournament.judges.order_by(user_model.USERNAME_FIELD))


def user_judge_keys(*, user: User) -> list[JudgeKey]:
    """The user's API keys, newest first, revoked ones too (their hashes only)."""
    return list(JudgeKey.objects.filter(user=user).order_by("-created_at", "-id"))


def welcome_link_user(*, uidb64: str, token: str) -> User | None:
    """The active account a one-time link signs in, or None (forged, used or expired)."""
    user = welcome_link_account(uidb64=uidb64)
    if user is None or not welcome_tokens.check_token(user, token):
        return None
    return user


def welcome_link_account(*, uidb64: str) -> User | None:
    """The active account named by a link's ``uidb64``, whatever its token; None if none."""
    user_model = get_user_model()
    try:
        pk = user_model._meta.pk.to_python(force_str(urlsafe_base64_decode(uidb64)))
    except (TypeError, ValueError, OverflowError, ValidationError):
        return None
    user: User | None = user_model._default_manager.filter(pk=pk).first()
    if user is None or not user.is_active:
        return None
    return user


# --- Judges -----------------------------------------------------------------------------------


def _account_named(username: str) -> User:
    user_model = get_user_model()
    # As Django stores it (NFKC): a full-width twin names the same account.
    name = user_model.normalize_username(username.strip())
    if not name:
        raise refusal(_("username: give the user name of the account"), "username")
    accounts = user_model._default_manager
    user: User | None = accounts.filter(**{user_model.USERNAME_FIELD: name}).first()
    if user is None:
        # Typed in another case: the account, when only one has the name in any case.
        matches = list(accounts.filter(**{f"{user_model.USERNAME_FIELD}__iexact": name})[:2])
        user = matches[0] if len(matches) == 1 else None
    if user is None:
        raise refusal(
            _('username: there is no account "%(name)s"') % {"name": name},
            "not_found",
        )
    if not user.is_active:
        raise refusal(
            _('username: the account "%(name)s" is disabled') % {"name": name}, "inactive"
        )
    return user


def _refuse_if_judge(tournament: Tournament, user: User) -> None:
    if tournament.judges.filter(pk=user.pk).exists():
        raise refusal(
            _('username: "%(name)s" is already a judge of this tournament')
            % {"name": user.get_username()},
            "already_judge",
        )


def _judge_of(tournament: Tournament, user_id: int) -> User:
    user: User | None = tournament.judges.filter(pk=user_id).first()
    if user is None:
        raise refusal(
            _("there is no judge %(id)s in this tournament") % {"id": user_id}, "not_found"
        )
    return user


def _username_free(username: str, *, taken: str) -> str:
    """``username`` cleaned as the user model wants it; refused if an account has it.

    Names differing only in case are refused too: two judges "anna" and "Anna" would be
    told apart by nobody in the log.
    """
    user_model = get_user_model()
    # Checked as Django will store it (NFKC), or a full-width twin of a taken name would
    # pass the check and fail on the database's unique constraint.
    name = user_model.normalize_username(username.strip())
    if not name:
        raise refusal(_("username: give the new judge a user name"), "username")
    name = name_checked(name, field="username")
    field = user_model._meta.get_field(user_model.USERNAME_FIELD)
    assert isinstance(field, Field)  # the user name is a column, not a relation
    try:
        name = field.clean(name, None)
    except ValidationError as error:
        raise refusal(
            _("username: %(problem)s") % {"problem": " ".join(error.messages)}, "username"
        ) from error
    found = user_model._default_manager.filter(
        **{f"{user_model.USERNAME_FIELD}__iexact": name}
    ).first()
    if found is not None:
        raise refusal(taken % {"name": found.get_username()}, "username_taken")
    return str(name)


def _refuse_weak_password(password: str, user: User) -> None:
    if not password:
        raise refusal(_("password: give a password"), "password")
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise refusal(
            _("password: %(problem)s") % {"problem": " ".join(error.messages)}, "password"
        ) from error


def _invitation(user: User) -> JudgeInvitation:
    return JudgeInvitation(
        user=user,
        uidb64=urlsafe_base64_encode(force_bytes(user.pk)),
        token=welcome_tokens.make_token(user),
    )


@unit_of_work()
def judge_add(*, tournament_id: int, username: str, actor: Actor, now: datetime) -> User:
    """An existing active account becomes a judge of the tournament.

    Not an account still waiting for its first sign-in: its link belongs to the judges who
    invited it, and a judge of this tournament could otherwise ask for one and sign in as
    him (issue 29).
    """
    tournament = tournament_lock(tournament_id)
    user = _account_named(username)
    _refuse_if_judge(tournament, user)
    if not user.has_usable_password():
        raise refusal(
            _(
                'username: "%(name)s" has not signed in with his invitation yet; add him '
                "once he has chosen a password"
            )
            % {"name": user.get_username()},
            "invitation_pending",
        )
    tournament.judges.add(user)
    log_write(
        tournament,
        actor=actor,
        action="judge_added",
        now=now,
        judge=user.get_username(),
        user=user.pk,
    )
    record_changed.send(sender=User, reason="judges")
    return user


@unit_of_work()
def judge_invite(
    *, tournament_id: int, username: str, actor: Actor, now: datetime
) -> JudgeInvitation:
    """A new account, without a password, judging the tournament; its one-time link."""
    tournament = tournament_lock(tournament_id)
    name = _username_free(
        username,
        taken=_(
            'username: there is already an account "%(name)s"; add it as an existing '
            "account, or choose another name"
        ),
    )
    user_model = get_user_model()
    # No password: the account is entered only through the link until its owner sets one.
    user = user_model._default_manager.create_user(
        **{user_model.USERNAME_FIELD: name}, password=None
    )
    tournament.judges.add(user)
    log_write(
        tournament,
        actor=actor,
        action="judge_invited",
        now=now,
        judge=user.get_username(),
        user=user.pk,
    )
    record_changed.send(sender=User, reason="judges")
    return _invitation(user)


@unit_of_work()
def judge_link_renew(
    *, tournament_id: int, user_id: int, actor: Actor, now: datetime
) -> JudgeInvitation:
    """A new one-time link for a judge who has not chosen a password yet (a lost link).

    Never for an account with a password: a judge may not sign in as another who has one.
    Never for an account that judges another tournament too: its judges did not agree to
    this judge signing in as their colleague.
    """
    tournament = tournament_lock(tournament_id)
    user = _judge_of(tournament, user_id)
    if user.judged_tournaments.exclude(pk=tournament.pk).exists():
        raise refusal(
            _(
                '"%(name)s" judges other tournaments too: only a site administrator may give '
                "him a sign-in link (manage.py createjudge --reset-password)"
            )
            % {"name": user.get_username()},
            "judges_elsewhere",
        )
    if user.has_usable_password():
        raise refusal(
            _(
                '"%(name)s" has chosen a password already: he signs in with it '
                "(a forgotten password is reset with manage.py createjudge --reset-password)"
            )
            % {"name": user.get_username()},
            "has_password",
        )
    # The lost link must stop working: a new unusable password changes what the tokens
    # hash, so every link given before is dead, and the new one differs from it even within
    # the same second.
    user.set_unusable_password()
    user.save(update_fields=["password"])
    log_write(
        tournament,
        actor=actor,
        action="judge_link_renewed",
        now=now,
        judge=user.get_username(),
        user=user.pk,
    )
    return _invitation(user)


@unit_of_work()
def judge_remove(*, tournament_id: int, user_id: int, actor: Actor, now: datetime) -> None:
    """The account stops judging the tournament; never its last judge."""
    tournament = tournament_lock(tournament_id)
    user = _judge_of(tournament, user_id)
    if tournament.judges.count() <= 1:
        raise refusal(
            _(
                '"%(name)s" is the only judge of this tournament: add another judge '
                "before removing him"
            )
            % {"name": user.get_username()},
            "last_judge",
        )
    tournament.judges.remove(user)
    log_write(
        tournament,
        actor=actor,
        action="judge_removed",
        now=now,
        judge=user.get_username(),
        user=user.pk,
    )
    record_changed.send(sender=User, reason="judges")


# --- Accounts (manage.py createjudge) --------------------------------------------------------


@unit_of_work()
def judge_account_create(*, username: str, password: str) -> User:
    """A new active account with ``password`` (checked by the site's password rules).

    It judges nothing yet: it becomes the judge of the tournaments it sets up, or is added
    to others by their judges.
    """
    name = _username_free(
        username,
        taken=_(
            'username: there is already an account "%(name)s" (--reset-password gives it a '
            "new password)"
        ),
    )
    user_model = get_user_model()
    _refuse_weak_password(password, user_model(**{user_model.USERNAME_FIELD: name}))
    user: User = user_model._default_manager.create_user(
        **{user_model.USERNAME_FIELD: name}, password=password
    )
    record_changed.send(sender=User, reason="judges")
    return user


@unit_of_work()
def judge_account_password_set(*, username: str, password: str) -> User:
    """A new password for an existing active account (its sessions end)."""
    user = _account_named(username)
    _refuse_weak_password(password, user)
    user.set_password(password)
    user.save(update_fields=["password"])
    record_changed.send(sender=User, reason="judges")
    return user


# --- API keys ---------------------------------------------------------------------------------


@unit_of_work()
def judge_key_issue(
    *, user: User, tournament_id: int, label: str, actor: Actor, now: datetime
) -> IssuedKey:
    """A new API key for ``user`` (shown once); the log of the tournament it was made in
    names it by its number and label, never the key."""
    tournament = tournament_lock(tournament_id)
    label = name_checked(label, field="label")
    if len(label) > MAX_KEY_LABEL:
        raise refusal(
            _("label: at most %(max)s characters") % {"max": MAX_KEY_LABEL}, "label_too_long"
        )
    issued = judge_key_create(user=user, label=label)
    log_write(
        tournament,
        actor=actor,
        action="judge_key_created",
        now=now,
        key_id=issued.judge_key.pk,
        label=label,
    )
    return issued


@unit_of_work()
def judge_key_revoke(
    *, user: User, key_id: int, tournament_id: int, actor: Actor, now: datetime
) -> JudgeKey:
    """``user``'s key stops working at once (``access.judge_key_user`` skips revoked keys)."""
    tournament = tournament_lock(tournament_id)
    judge_key = JudgeKey.objects.select_for_update().filter(pk=key_id, user=user).first()
    if judge_key is None:
        raise refusal(_("you have no API key %(id)s") % {"id": key_id}, "not_found")
    if judge_key.revoked_at is not None:
        raise refusal(_("the API key %(id)s is revoked already") % {"id": key_id}, "revoked")
    judge_key.revoked_at = now
    judge_key.save(update_fields=["revoked_at"])
    log_write(
        tournament,
        actor=actor,
        action="judge_key_revoked",
        now=now,
        key_id=judge_key.pk,
        label=judge_key.label,
    )
    record_changed.send(sender=JudgeKey, reason="judge_key")
    return judge_key
