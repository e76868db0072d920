"""Top-level URL configuration."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path

from referees.pages.home import admin_sign_in, home, sign_in, sign_out
from referees.pages.join import join
from referees.pages.welcome import judge_welcome
from sl5r.api import api_not_found, api_urls
from sl5r.views import healthz

urlpatterns = [
    path("", home, name="home"),
    path("accounts/sign-in/", sign_in, name="sign_in"),
    path("accounts/sign-out/", sign_out, name="sign_out"),
    # A new judge's one-time link (referees/services/judges.py); then he signs in on the page above.
    path("accounts/welcome/<str:uidb64>/<str:token>/", judge_welcome, name="judge_welcome"),
    path("", include("strategic_map.urls")),
    path("referees/", include("referees.urls")),
    path("", include("battles.urls")),
    path("api/", api_urls()),
    # Anything else under /api/ answers in the API's own JSON error format.
    re_path(r"^api/(?P<rest>.*)$", api_not_found),
    path("join/<str:token>", join, name="join"),
    path("healthz", healthz, name="healthz"),
    path("i18n/", include("django.conf.urls.i18n")),
]
# The admin where the operator wants it (SL5R_ADMIN_PATH; "off": nowhere), and then only
# from SL5R_ADMIN_NETWORKS (sl5r/serving/admin_reach.py).
if settings.SL5R_ADMIN_PATH:
    urlpatterns += [
        # Before the admin's own: its sign-in counts wrong passwords as the site's does.
        path(f"{settings.SL5R_ADMIN_PATH}login/", admin_sign_in, name="admin_sign_in"),
        path(settings.SL5R_ADMIN_PATH, admin.site.urls),
    ]
