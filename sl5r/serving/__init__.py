"""The serving plumbing: HTTP on kept threads, the middleware that answers early, the SQLite
backend and the registry of order requests not yet answered.

The apps use it only through ``sl5r.serving.interface``; the project's entry points
(``sl5r/asgi.py``, ``sl5r/settings.py``, ``sl5r/api.py``, ``sl5r/views.py``) wire up the
modules themselves. This file imports nothing, so that loading the SQLite backend
(``sl5r.serving.sqlite``) loads none of the rest.
"""
