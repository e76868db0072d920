"""Top-level URL configuration."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path

from referees.views import join
from sl5r.api import api_not_found, api_urls
from sl5r.views import healthz

urlpatterns = [
    path("", include("strategic_map.urls")),
    path("referees/", include("referees.urls")),
    path("", include("battles.urls")),
    path("api/", api_urls()),
    # Anything else under /api/ answers in the API's own JSON error format.
    re_path(r"^api/(?P<rest>.*)$", api_not_found),
    path("join/<str:token>", join, name="join"),
    path("healthz", healthz, name="healthz"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]
