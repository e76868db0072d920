"""The ``Permissions-Policy`` header on every response (``settings.SL5R_PERMISSIONS_POLICY``).

No page of this site uses the camera, the microphone, the location or the other powerful
features, so every response denies them to itself and to anything it might embed: a script
that got in anyway (the Content-Security-Policy is the first line) cannot ask a phone for
them. Django's ``SecurityMiddleware`` sets ``Referrer-Policy`` and the other headers; it has
no setting for this one. Players' phones scan QR codes with their own camera app, never
through a page. ``clipboard-write`` stays allowed: the judge console copies join links.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

HEADER = "Permissions-Policy"


def permissions_policy(features: dict[str, str]) -> str:
    """``{"camera": "()"}`` -> ``camera=()``, joined with ``, `` as the header wants."""
    return ", ".join(f"{feature}={allow}" for feature, allow in features.items())


class PermissionsPolicyMiddleware:
    """Adds the header unless a view set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.value = permissions_policy(settings.SL5R_PERMISSIONS_POLICY)

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if self.value and HEADER not in response:
            response[HEADER] = self.value
        return response
