"""The settings pytest runs with: the site's own (``sl5r/settings.py``), two things changed.

Django's production hasher (PBKDF2, a million iterations) takes over half a second a
password on a two-core machine, and the tests make an account in almost every test (the
judge of ``make_game``). Django's documentation ("Speeding up the tests") recommends a fast
hasher for tests; what a password is stored as is no behaviour the tests check. Servers and
workers that tests start as subprocesses name ``sl5r.settings`` themselves and hash as
production does.
"""

from sl5r.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The tests that read a websocket in-process take its frames in order, and a heartbeat pong
# falling between two of them on a busy machine would only make them wait for the next: the
# heartbeat's own test sets it (tests/referees/live/test_consumers.py). Served sites and the
# browser keep the site's 4 s.
SL5R_LIVE_HEARTBEAT_SECONDS = 3600.0
