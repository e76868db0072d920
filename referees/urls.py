from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from referees import views

app_name = "referees"

urlpatterns: list[URLPattern | URLResolver] = [
    path("me/", views.me, name="me"),
    path("tournaments/<int:tournament_id>/join-sheet", views.join_sheet, name="join_sheet"),
]
