from __future__ import annotations

from django.urls import path

from strategic_map import views

app_name = "strategic_map"

urlpatterns = [
    path("maps/<slug:slug>/", views.map_page, name="map"),
]
