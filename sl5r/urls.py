"""Top-level URL configuration."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from sl5r.views import healthz

urlpatterns = [
    path("", include("strategic_map.urls")),
    path("referees/", include("referees.urls")),
    path("healthz", healthz, name="healthz"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]
