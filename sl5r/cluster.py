"""The production shape on one machine: ``python -m sl5r.cluster`` (``make cluster``).

A small foreground supervisor. It checks that PostgreSQL and Redis answer (and starts them
with the machine's own commands when they are the local defaults and do not), creates the
database if it is missing, migrates, collects the static files, loads the map and, unless
``--no-demo``, the demo tournament. Then it starts and watches:

- two ASGI processes, ``manage.py serve --no-clock`` (Daphne), on ``--asgi-ports``;
- ``sl5r.tcp_proxy`` on ``--port``, spreading connections over them round-robin;
- one Celery worker (``--concurrency``) and exactly one Celery beat.

Everything is configured by environment variables (README.md, "Configuration"), with
``SL5R_CLOCK=celery`` forced and production defaults: ``DEBUG`` off and a ``SECRET_KEY``
generated once and kept in ``<dir>/secret_key``; plain HTTP on 127.0.0.1, so
``SECURE_SSL_REDIRECT`` defaults to off. Each child's output goes to
``<dir>/logs/<name>.log``. When every part answers it prints ``cluster ready: proxy=…
asgi=…`` and writes ``<dir>/cluster.json``. A child that dies is restarted after a short
backoff. SIGINT or SIGTERM (or ``python -m sl5r.cluster stop --dir <dir>``) stops the
proxy, the ASGI processes, beat and the worker in that order, and the supervisor exits 0.

    python -m sl5r.cluster [--dir var/cluster] [--port 8000] [--asgi-ports 8001,8002]
                           [--no-demo] [--concurrency 2]
    python -m sl5r.cluster stop [--dir var/cluster]

Only the standard library is imported at the top: the supervisor needs no Django settings.
The Django work runs in ``manage.py`` subprocesses; psycopg and redis are imported only to
check the services.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DIR = "var/cluster"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/sl5r"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
HOST = "127.0.0.1"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

SERVICE_WAIT_SECONDS = 60.0  # for PostgreSQL or Redis started here to answer
READY_SECONDS = 120.0  # for every child to answer after the start
STOP_SECONDS = 20.0  # per child, after SIGTERM, before SIGKILL
POLL_SECONDS = 0.2
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 10.0  # seconds before restarting a child that died
STEADY_SECONDS = 30.0  # a child that ran this long before dying restarts at once again
STOP_ORDER = ("proxy", "asgi", "beat", "worker")  # name prefixes: proxy first, worker last

EXIT_OK, EXIT_FAILED, EXIT_CONFIG = 0, 1, 2


class ClusterError(Exception):
    """A problem that stops the cluster with one line (exit 2)."""


# --- Configuration -----------------------------------------------------------------------


def secret_key_keep(directory: Path) -> str:
    """The cluster's ``SECRET_KEY``: made once, kept in ``<dir>/secret_key`` (mode 0600).

    Kept so that sessions and join links survive a restart of the cluster.
    """
    path = directory / "secret_key"
    if path.exists():
        key = path.read_text(encoding="ascii").strip()
        if key:
            return key
    key = secrets.token_urlsafe(50)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as out:
        out.write(key + "\n")
    return key


def cluster_environment(environ: Mapping[str, str], *, secret_key: str) -> dict[str, str]:
    """The environment of every process of the cluster.

    What the caller set wins, except ``SL5R_CLOCK``: the cluster's turns are resolved by
    its Celery worker and beat. ``SECURE_SSL_REDIRECT`` defaults to off because the cluster
    serves plain HTTP on 127.0.0.1 (with TLS in front, set it to 1 and
    ``SECURE_PROXY_SSL_HEADER=1``).
    """
    env = dict(environ)
    for name, default in (
        ("DATABASE_URL", DEFAULT_DATABASE_URL),
        ("REDIS_URL", DEFAULT_REDIS_URL),
        ("SECRET_KEY", secret_key),
        ("DEBUG", "0"),
        ("SECURE_SSL_REDIRECT", "0"),
        ("DJANGO_SETTINGS_MODULE", "sl5r.settings"),
    ):
        if not env.get(name, "").strip():
            env[name] = default
    env["SL5R_CLOCK"] = "celery"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def redacted(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def ports_parse(text: str) -> list[int]:
    """``8001,8002`` as a list of ports; 0 stays 0 (a free port is picked later)."""
    ports = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit() or not 0 <= int(item) < 65536:
            raise argparse.ArgumentTypeError(f"{item!r} is not a port number")
        ports.append(int(item))
    if not ports:
        raise argparse.ArgumentTypeError("at least one port")
    taken = [p for p in ports if p and ports.count(p) > 1]
    if taken:
        raise argparse.ArgumentTypeError(f"port {taken[0]} given twice")
    return ports


def port_free() -> int:
    """A port nobody listens on now (the OS's pick)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


# --- The services: PostgreSQL and Redis ---------------------------------------------------


def _is_local_default(url: str, port: int) -> bool:
    parts = urlsplit(url)
    return (parts.hostname or HOST) in LOCAL_HOSTS and (parts.port or port) == port


def postgres_problem(url: str) -> str | None:
    """``None`` when the database at ``url`` accepts a connection, else the reason."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        lines = str(error).strip().splitlines()
        return lines[0] if lines else type(error).__name__
    return None


def postgres_database_create(url: str) -> bool:
    """Create the database ``url`` names when the server answers but it is missing.

    True when it was created. Raises ClusterError when the server does not answer.
    """
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    try:
        with psycopg.connect(maintenance, connect_timeout=3, autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if found:
                return False
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as error:
        lines = str(error).strip().splitlines()
        raise ClusterError(
            f"PostgreSQL at {redacted(url)}: {lines[0] if lines else type(error).__name__}"
        ) from error
    return True


def redis_problem(url: str) -> str | None:
    """``None`` when Redis at ``url`` answers PING, else the reason."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as error:
        return str(error) or type(error).__name__
    finally:
        client.close()
    return None


def _postgres_start() -> list[str]:
    versions = sorted(
        (p.name for p in Path("/etc/postgresql").glob("*") if p.is_dir()),
        key=lambda v: [int(x) if x.isdigit() else 0 for x in v.split(".")],
    )
    if not versions or shutil.which("pg_ctlcluster") is None:
        raise ClusterError(
            "PostgreSQL is not answering at 127.0.0.1:5432 and this machine has no "
            "pg_ctlcluster to start it; start it, or set DATABASE_URL"
        )
    return ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "start"]


def _redis_start(directory: Path) -> list[str]:
    if shutil.which("redis-server") is None:
        raise ClusterError(
            "Redis is not answering at 127.0.0.1:6379 and this machine has no redis-server "
            "to start it; start it, or set REDIS_URL"
        )
    data = directory / "redis"
    data.mkdir(parents=True, exist_ok=True)
    return [
        "redis-server",
        "--daemonize",
        "yes",
        "--bind",
        "127.0.0.1",
        "-::1",
        "--port",
        "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(data),
        "--logfile",
        str(directory / "logs" / "redis-server.log"),
    ]


def _tcp_answers(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or HOST, parts.port or default_port), 3):
            return True
    except OSError:
        return False


def services_ensure(env: Mapping[str, str], directory: Path, say: Callable[[str], None]) -> None:
    """PostgreSQL and Redis answer, and the database exists; else ClusterError.

    A server that does not answer at its local default address (127.0.0.1:5432,
    127.0.0.1:6379) is started with the machine's commands, as ``.ci/run`` does, and left
    running afterwards; anywhere else the cluster stops and says so.
    """
    database_url, redis_url = env["DATABASE_URL"], env["REDIS_URL"]
    if urlsplit(database_url).scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ClusterError(
            f"DATABASE_URL: the cluster runs on PostgreSQL (postgres://…), got "
            f"{redacted(database_url)}"
        )
    if urlsplit(redis_url).scheme not in {"redis", "rediss"}:
        raise ClusterError(f"REDIS_URL: expected redis://host:port/db, got {redacted(redis_url)}")

    if not _tcp_answers(database_url, 5432):
        if not _is_local_default(database_url, 5432):
            raise ClusterError(f"PostgreSQL at {redacted(database_url)} is not answering")
        _service_start("PostgreSQL", _postgres_start(), directory, say)
        _service_wait("PostgreSQL", lambda: None if _tcp_answers(database_url, 5432) else "")
    problem = postgres_problem(database_url)
    if problem is not None:
        try:
            created = postgres_database_create(database_url)
        except ClusterError:
            created = False
        if created:
            say(f"created the database {urlsplit(database_url).path.lstrip('/')}")
        problem = postgres_problem(database_url)
    if problem is not None:
        raise ClusterError(f"PostgreSQL at {redacted(database_url)}: {problem}")

    if not _tcp_answers(redis_url, 6379):
        if not _is_local_default(redis_url, 6379):
            raise ClusterError(f"Redis at {redacted(redis_url)} is not answering")
        _service_start("Redis", _redis_start(directory), directory, say)
        _service_wait("Redis", lambda: redis_problem(redis_url))
    problem = redis_problem(redis_url)
    if problem is not None:
        raise ClusterError(f"Redis at {redacted(redis_url)}: {problem}")


def _service_start(name: str, argv: list[str], directory: Path, say: Callable[[str], None]) -> None:
    say(f"{name} is not answering; starting it: {' '.join(argv)} (it stays up afterwards)")
    with (directory / "logs" / "services.log").open("ab") as out:
        code = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    if code != 0:
        raise ClusterError(f"could not start {name}: {argv[0]} exited {code} (logs/services.log)")


def _service_wait(name: str, problem: Callable[[], str | None]) -> None:
    end = time.monotonic() + SERVICE_WAIT_SECONDS
    last = problem()
    while last is not None and time.monotonic() < end:
        time.sleep(0.5)
        last = problem()
    if last is not None:
        raise ClusterError(f"{name} started but not answering after {SERVICE_WAIT_SECONDS:g} s")


# --- Children ----------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In a child, before exec: get SIGTERM when the supervisor dies (Linux), so that a
    supervisor killed outright does not leave its children running."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        # A killed multi-threaded process shows its first thread as a zombie while the
        # others are still ending, its sockets still open: gone only when they are too.
        threads = len(os.listdir(f"/proc/{pid}/task"))
    except (OSError, IndexError):
        return True
    return state != "Z" or threads > 1


def _group_kill(pgid: int) -> None:
    """SIGKILL what is left of a child's process group (e.g. a worker's pool processes)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@dataclass
class Child:
    """One supervised process: its command, log and how to tell that it answers."""

    name: str
    argv: list[str]
    log: Path
    ready_check: Callable[[Child], bool]
    pass_fds: tuple[int, ...] = ()
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    log_start: int = 0
    ready: bool = False
    quick_deaths: int = 0
    restart_at: float | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self, env: Mapping[str, str]) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            out.write(f"--- cluster: starting {self.name} at {stamp} ---\n".encode())
            out.flush()
            self.log_start = out.tell()
            self.process = subprocess.Popen(
                self.argv,
                cwd=BASE_DIR,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=self.pass_fds,
                # Its own process group: Ctrl-C reaches only the supervisor, which stops
                # the children in order, and a stop reaches a child's own children too.
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        self.started = time.monotonic()
        self.ready = False
        self.restart_at = None

    def output(self) -> str:
        """What it printed since its last start."""
        try:
            with self.log.open("rb") as log:
                log.seek(self.log_start)
                return log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def check_ready(self) -> bool:
        if not self.ready and self.process is not None and self.process.poll() is None:
            self.ready = self.ready_check(self)
        return self.ready

    def stop(self, timeout: float = STOP_SECONDS) -> int | None:
        """SIGTERM, wait, SIGKILL after ``timeout``; its exit status."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _group_kill(process.pid)
                process.wait(timeout=timeout)
        _group_kill(process.pid)
        return process.returncode


def _healthz(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=3) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _answers(url: str) -> Callable[[Child], bool]:
    return lambda _child: _healthz(url)


def _printed(text: str) -> Callable[[Child], bool]:
    return lambda child: text in child.output()


@dataclass
class Plan:
    """What the cluster runs, with every port decided."""

    directory: Path
    proxy_port: int
    asgi_ports: list[int]
    concurrency: int
    demo: bool
    proxy_socket: socket.socket
    children: list[Child] = field(default_factory=list)

    @property
    def proxy_url(self) -> str:
        return f"http://{HOST}:{self.proxy_port}"

    @property
    def asgi_urls(self) -> list[str]:
        return [f"http://{HOST}:{port}" for port in self.asgi_ports]


def plan_make(
    *, directory: Path, port: int, asgi_ports: Sequence[int], concurrency: int, demo: bool
) -> Plan:
    """Bind the proxy's socket (kept here, so that a restarted proxy finds it and clients
    wait in its backlog meanwhile), pick the free ports, and list the children."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((HOST, port))
    except OSError as error:
        listener.close()
        raise ClusterError(f"--port {port}: cannot listen on {HOST}:{port}: {error}") from error
    listener.listen(1024)
    ports = [p or port_free() for p in asgi_ports]
    plan = Plan(
        directory=directory,
        proxy_port=int(listener.getsockname()[1]),
        asgi_ports=ports,
        concurrency=concurrency,
        demo=demo,
        proxy_socket=listener,
    )
    logs = directory / "logs"
    python = sys.executable
    celery = [python, "-m", "celery", "-A", "sl5r.celery"]
    plan.children.append(
        Child(
            "worker",
            [
                *celery,
                "worker",
                f"--concurrency={concurrency}",
                "--loglevel=INFO",
                # Unique on the machine: two clusters (or a test's) never share a node name.
                f"--hostname=sl5r-{plan.proxy_port}@%h",
            ],
            logs / "worker.log",
            _printed(" ready."),
        )
    )
    plan.children.append(
        Child(
            "beat",
            [
                *celery,
                "beat",
                "--loglevel=INFO",
                f"--schedule={directory / 'celerybeat-schedule'}",
            ],
            logs / "beat.log",
            _printed("beat: Starting"),
        )
    )
    for number, asgi_port in enumerate(ports, start=1):
        url = f"http://{HOST}:{asgi_port}"
        plan.children.append(
            Child(
                f"asgi-{number}",
                [
                    python,
                    "manage.py",
                    "serve",
                    "--no-clock",
                    "--host",
                    HOST,
                    "--port",
                    str(asgi_port),
                ],
                logs / f"asgi-{number}.log",
                _answers(url),
            )
        )
    proxy_argv = [python, "-m", "sl5r.tcp_proxy", "--fd", str(listener.fileno())]
    for asgi_port in ports:
        proxy_argv += ["--backend", f"{HOST}:{asgi_port}"]
    plan.children.append(
        Child(
            "proxy",
            proxy_argv,
            logs / "proxy.log",
            _answers(plan.proxy_url),
            pass_fds=(listener.fileno(),),
        )
    )
    return plan


# --- The supervisor ----------------------------------------------------------------------


class Supervisor:
    """Runs the set-up, starts the children, restarts those that die, stops them all."""

    def __init__(self, plan: Plan, env: Mapping[str, str]) -> None:
        self.plan = plan
        self.env = dict(env)
        self.stopping = False

    def say(self, line: str) -> None:
        print(f"cluster: {line}", flush=True)

    def stop_requested(self) -> bool:
        # A call, not the attribute: the signal handler may set it between two reads.
        return self.stopping

    def on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if not self.stopping:
            self.say(f"{signal.Signals(signum).name} received, stopping")
        self.stopping = True

    # -- set-up -----------------------------------------------------------------------

    def manage(self, *args: str, show: bool = False) -> bool:
        """Run ``manage.py args`` to its end (or until a stop); False when stopped."""
        if self.stopping:
            return False
        log = self.plan.directory / "logs" / "setup.log"
        self.say(f"manage.py {' '.join(args)}")
        with log.open("ab") as out:
            start = out.tell()
            process = subprocess.Popen(
                [sys.executable, "manage.py", *args],
                cwd=BASE_DIR,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            while process.poll() is None:
                if self.stop_requested():
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait()
                    return False
                time.sleep(POLL_SECONDS)
        with log.open("rb") as read:
            read.seek(start)
            printed = read.read().decode("utf-8", errors="replace")
        if process.returncode != 0:
            tail = "\n".join(printed.splitlines()[-15:])
            raise ClusterError(
                f"manage.py {args[0]} failed (exit {process.returncode}); see {log}:\n{tail}"
            )
        if show:
            print(printed, end="" if printed.endswith("\n") else "\n", flush=True)
        return True

    def setup(self) -> bool:
        steps: list[tuple[tuple[str, ...], bool]] = [
            (("migrate", "--noinput"), False),
            (("collectstatic", "--noinput"), False),
            (("loadmap",), False),
        ]
        if self.plan.demo:
            steps.append((("loaddemo", "--base-url", self.plan.proxy_url), True))
        return all(self.manage(*args, show=show) for args, show in steps)

    # -- running ----------------------------------------------------------------------

    def state_write(self) -> None:
        plan = self.plan
        state: dict[str, Any] = {
            "proxy": plan.proxy_url,
            "asgi": plan.asgi_urls,
            "database_url": self.env["DATABASE_URL"],
            "redis_url": self.env["REDIS_URL"],
            "pids": {c.name: c.pid for c in plan.children},
            "logs": {c.name: str(c.log) for c in plan.children},
            "supervisor": os.getpid(),
        }
        path = plan.directory / "cluster.json"
        temporary = path.with_suffix(".json.tmp")
        # It may hold the database password: readable by its owner only.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump(state, out, indent=2)
            out.write("\n")
        os.replace(temporary, path)

    def watch(self, child: Child) -> bool:
        """Restart ``child`` if it died; True when its pid changed."""
        process = child.process
        if process is None or process.poll() is None:
            return False
        now = time.monotonic()
        if child.restart_at is None:
            # Leftovers of a worker killed outright (its pool) must not keep working.
            _group_kill(process.pid)
            ran = now - child.started
            child.quick_deaths = 0 if ran >= STEADY_SECONDS else child.quick_deaths + 1
            delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** max(0, child.quick_deaths - 1))
            child.restart_at = now + delay
            self.say(
                f"{child.name} (pid {process.pid}) exited with status {process.returncode} "
                f"after {ran:.1f} s; restarting in {delay:g} s (log: {child.log})"
            )
            return False
        if now < child.restart_at:
            return False
        child.start(self.env)
        self.say(f"{child.name} restarted (pid {child.pid})")
        return True

    def run(self) -> int:
        plan = self.plan
        if not self.setup():
            return EXIT_OK
        for child in plan.children:
            child.start(self.env)
            self.say(f"started {child.name} (pid {child.pid}, log {child.log})")
        deadline = time.monotonic() + READY_SECONDS
        announced = False
        while not self.stopping:
            changed = any([self.watch(child) for child in plan.children])
            if not announced:
                # In start order, each checked once the ones before answer: the proxy is
                # asked only when the ASGI processes behind it are up.
                waiting: list[str] = []
                for child in plan.children:
                    if waiting or not child.check_ready():
                        waiting.append(child.name)
                if not waiting:
                    self.state_write()
                    print(
                        f"cluster ready: proxy={plan.proxy_url} asgi={','.join(plan.asgi_urls)}",
                        flush=True,
                    )
                    announced = True
                elif time.monotonic() > deadline:
                    self.say(
                        f"not ready after {READY_SECONDS:g} s: {', '.join(waiting)} "
                        f"(see {plan.directory / 'logs'})"
                    )
                    return EXIT_FAILED
            elif changed:
                self.state_write()
            time.sleep(POLL_SECONDS)
        return EXIT_OK

    def stop(self) -> None:
        """Stop every child: the proxy first, then ASGI, beat, and the worker last."""
        plan = self.plan
        ordered = sorted(
            plan.children,
            key=lambda c: next(i for i, p in enumerate(STOP_ORDER) if c.name.startswith(p)),
        )
        for child in ordered:
            if child.process is None:
                continue
            code = child.stop()
            self.say(f"stopped {child.name} (pid {child.pid}, status {code})")
        plan.proxy_socket.close()
        (plan.directory / "cluster.json").unlink(missing_ok=True)


# --- Entry points --------------------------------------------------------------------------


def _pid_file(directory: Path) -> Path:
    return directory / "cluster.pid"


def _running_pid(directory: Path) -> int | None:
    """The pid of the supervisor running in ``directory``, if one is."""
    try:
        pid = int(_pid_file(directory).read_text().strip())
    except (OSError, ValueError):
        return None
    if pid == os.getpid() or not process_alive(pid):
        return None
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return pid  # no /proc: trust the file
    return pid if b"sl5r.cluster" in command else None


def start(args: argparse.Namespace) -> int:
    directory = Path(args.dir).resolve()
    (directory / "logs").mkdir(parents=True, exist_ok=True)

    def line(text: str) -> None:
        print(f"cluster: {text}", flush=True)

    running = _running_pid(directory)
    if running is not None:
        line(
            f"a cluster is already running in {directory} (pid {running}); "
            f"stop it with: python -m sl5r.cluster stop --dir {args.dir}"
        )
        return EXIT_CONFIG
    _pid_file(directory).write_text(f"{os.getpid()}\n")
    supervisor: Supervisor | None = None
    try:
        secret_key = os.environ.get("SECRET_KEY", "").strip() or secret_key_keep(directory)
        env = cluster_environment(os.environ, secret_key=secret_key)
        plan = plan_make(
            directory=directory,
            port=args.port,
            asgi_ports=args.asgi_ports,
            concurrency=args.concurrency,
            demo=not args.no_demo,
        )
        supervisor = Supervisor(plan, env)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, supervisor.on_signal)
        services_ensure(env, directory, line)
        code = supervisor.run()
    except ClusterError as error:
        print(f"cluster: {error}", file=sys.stderr, flush=True)
        code = EXIT_CONFIG
    finally:
        if supervisor is not None:
            supervisor.stop()
        _pid_file(directory).unlink(missing_ok=True)
    if code == EXIT_OK:
        line("stopped")
    return code


def stop(args: argparse.Namespace) -> int:
    """Signal the supervisor running in ``--dir`` and wait for it to exit."""
    directory = Path(args.dir).resolve()
    pid = _running_pid(directory)
    if pid is None:
        print(f"cluster: no cluster is running in {directory}", file=sys.stderr)
        return EXIT_FAILED
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + args.timeout
    while process_alive(pid):
        if time.monotonic() > end:
            print(f"cluster: pid {pid} still running after {args.timeout:g} s", file=sys.stderr)
            return EXIT_FAILED
        time.sleep(POLL_SECONDS)
    print(f"cluster: stopped (pid {pid})")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["stop"]:
        parser = argparse.ArgumentParser(
            prog="python -m sl5r.cluster stop", description="Stop a running cluster."
        )
        parser.add_argument(
            "--dir", default=DEFAULT_DIR, help=f"its folder (default {DEFAULT_DIR})"
        )
        parser.add_argument(
            "--timeout", type=float, default=120.0, help="seconds to wait (default 120)"
        )
        return stop(parser.parse_args(argv[1:]))
    parser = argparse.ArgumentParser(
        prog="python -m sl5r.cluster",
        description="Run the production shape on this machine: PostgreSQL, Redis, two ASGI "
        "processes behind a proxy, a Celery worker and beat. `stop` stops it.",
    )
    parser.add_argument(
        "--dir", default=DEFAULT_DIR, help=f"state, logs and secret key (default {DEFAULT_DIR})"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="the proxy's port; 0 picks a free one (default 8000)"
    )
    parser.add_argument(
        "--asgi-ports",
        type=ports_parse,
        default=[8001, 8002],
        metavar="A,B",
        help="the ASGI processes' ports; 0 picks a free one (default 8001,8002)",
    )
    parser.add_argument("--no-demo", action="store_true", help="do not load the demo tournament")
    parser.add_argument(
        "--concurrency", type=int, default=2, help="the Celery worker's processes (default 2)"
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port < 65536:
        parser.error(f"--port: {args.port} is not a port number")
    if args.concurrency < 1:
        parser.error("--concurrency: at least 1")
    return start(args)


if __name__ == "__main__":
    sys.exit(main())
