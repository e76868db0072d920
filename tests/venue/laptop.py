"""A laptop at the venue, played by processes on this machine: its own venue folder and
SQLite file, ``manage.py venue`` serving it, and devices (phones, the judge's laptop) that
talk to it over loopback with their own cookies. Shared by the venue's end-to-end tests."""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.venue_server import free_port

BASE_DIR = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 90.0


def wait_until(condition: Callable[[], bool], timeout: float = WAIT_SECONDS) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class Browser:
    """A device: its own cookies (a phone, the judge's laptop), no redirects followed."""

    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def request(
        self,
        url: str,
        *,
        method: str = "GET",
        body: dict[str, Any] | None = None,
        form: dict[str, str] | None = None,
        token: str | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        csrf = self.cookie("csrftoken")
        if csrf and method != "GET":
            headers["X-CSRFToken"] = csrf
            headers["Referer"] = url
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirect()
        )
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with opener.open(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def json(self, url: str, **kwargs: Any) -> tuple[int, Any]:
        status, _, content = self.request(url, **kwargs)
        try:
            return status, json.loads(content)
        except ValueError:
            return status, content.decode("utf-8", "replace")

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)


@dataclass
class Laptop:
    """One machine: a venue folder, a database file, a server when started."""

    root: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    # Settings of this laptop's own (environment variables), over the test run's.
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def venue(self) -> Path:
        return self.root / "venue"

    @property
    def database(self) -> Path:
        return self.root / "db.sqlite3"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def env(self) -> dict[str, str]:
        drop = {"REDIS_URL", "SECRET_KEY", "SITE_URL", "VENUE_BACKUP_DIR", "ALLOWED_HOSTS"}
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update(
            DJANGO_SETTINGS_MODULE="sl5r.settings",
            SL5R_VENUE="1",
            VENUE_DIR=str(self.venue),
            DATABASE_URL=f"sqlite:///{self.database}",  # an absolute path: four slashes
            HOST="127.0.0.1",
            PORT=str(self.port),
            SL5R_CLOCK="inprocess",
            SL5R_CLOCK_INTERVAL="0.2",
            PYTHONUNBUFFERED="1",
        )
        env.update(self.settings)
        return env

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=BASE_DIR,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
        )

    def serve(self) -> None:
        """``manage.py venue`` (what ``make venue`` runs), until it answers /healthz."""
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "venue", "--no-demo", "--no-qr"],
                cwd=BASE_DIR,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

        def healthy() -> bool:
            assert self.process is not None
            assert self.process.poll() is None, self.log.read_text()
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as response:
                    return bool(response.status == 200)
            except OSError:
                return False

        assert wait_until(healthy), self.log.read_text()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
