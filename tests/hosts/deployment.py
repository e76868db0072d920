"""The site on several machines, started from ``deploy/`` as an operator installs it.

On the hosts of ``tests.hosts.network`` (docs/deployment.md, "On several machines"):

- **data**: a PostgreSQL cluster of its own (``initdb``, listening on 10.0.0.20 only, a
  password for the ``sl5r`` role) and a ``redis-server`` (10.0.0.21, ``requirepass``);
- **app1**: an ASGI process, a Celery worker and the one Celery beat; **app2**: an ASGI
  process and a Celery worker. Each is the ``ExecStart`` of its unit in
  ``deploy/systemd/`` with the unit's ``Environment=`` and ``EnvironmentFile=`` (the
  shared ``sl5r.env`` made from ``deploy/sl5r.env.example``, each machine's ``local.env``
  with its own address), ``%i`` and ``%H`` filled in as systemd does, and ``/srv/sl5r``
  this checkout;
- **balancer**: HAProxy with ``deploy/haproxy/haproxy.cfg`` and the variables of
  ``deploy/balancer.env.example``, ending TLS with a certificate made for the run, with the
  file limit of ``deploy/systemd/haproxy.service.d/sl5r.conf``.

Only what cannot be the same on a test machine is changed, and each change is listed in
``DIFFERENCES``: the secrets (made for the run), the certificate's path, the beat's state
directory, where the static files are collected, and the user (root here, not ``sl5r``).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import resource
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sl5r.cluster import balancer_maxconn
from tests.hosts.control import ANSWER_PREFIX
from tests.hosts.network import Host, Network

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SITE = "referee.example.org"
ASGI_PORT = 8001
HTTPS_PORT = 443
CHECKOUT = "/srv/sl5r"
DIFFERENCES = (
    "secrets: every CHANGE-ME of sl5r.env.example is a password made for the run",
    "the certificate: a self-signed one for referee.example.org, made for the run",
    "/srv/sl5r is this checkout, its interpreter the one running the tests",
    "/var/lib/sl5r (the beat's StateDirectory) and STATIC_ROOT are in the run's folder",
    "SL5R_BALANCER_STATS: HAProxy's runtime socket in the run's folder, not /run/haproxy",
    "User=sl5r and SL5R_BALANCER_USER: processes run as root",
    "LimitNOFILE: at most this machine's hard limit, and HAProxy's maxconn lowered to fit",
    "HAProxy in the foreground (-db), not Debian's unit (-Ws, systemd's notification)",
    "PostgreSQL made by initdb in the run's folder, fsync off (nothing outlives the run)",
    "Redis without snapshots (--save '', no append-only file): nothing outlives the run",
)
READY_SECONDS = 60.0
POLL_SECONDS = 0.1
APP_HOSTS = ("app1", "app2")
CONTROL_SECONDS = 180.0  # for one command of the judge's side (a tournament set up: seconds)


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError(f"waited {timeout:g} s for {what}")
        time.sleep(POLL_SECONDS)


def environment_file_read(path: Path) -> dict[str, str]:
    """KEY=VALUE lines as systemd's EnvironmentFile reads them (comments and blanks skipped)."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip().strip('"')
    return values


def environment_file_write(path: Path, values: Mapping[str, str]) -> None:
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    path.chmod(0o600)


@dataclass(frozen=True)
class Unit:
    """What a systemd unit of ``deploy/systemd`` runs: its command line and environment."""

    exec_start: str
    environment: dict[str, str]
    environment_files: list[tuple[str, bool]]  # path, required
    limits: dict[str, int]

    @classmethod
    def read(cls, path: Path) -> Unit:
        exec_start = ""
        environment: dict[str, str] = {}
        files: list[tuple[str, bool]] = []
        limits: dict[str, int] = {}
        for line in path.read_text().splitlines():
            key, sep, value = line.partition("=")
            if not sep or line.startswith("#"):
                continue
            if key == "ExecStart":
                exec_start = value
            elif key == "Environment":
                for pair in shlex.split(value):
                    name, _, setting = pair.partition("=")
                    environment[name] = setting
            elif key == "EnvironmentFile":
                files.append((value.lstrip("-"), not value.startswith("-")))
            elif key.startswith("Limit"):
                limits[key] = int(value)
        return cls(exec_start, environment, files, limits)

    def command(self, *, instance: str, hostname: str, env: Mapping[str, str]) -> list[str]:
        """The ExecStart's argv as systemd runs it: specifiers and ${VAR} expanded."""
        line = self.exec_start.replace("%i", instance).replace("%H", hostname)
        line = re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), line)
        return shlex.split(line)


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self, sig: signal.Signals = signal.SIGKILL) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)
        try:
            self.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=30)

    def tail(self, lines: int = 30) -> str:
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(f"  {self.name}: {line}" for line in text[-lines:])


@dataclass
class Deployment:
    """The five hosts with the site running on them; ``close`` stops everything."""

    network: Network
    folder: Path
    shared_env: dict[str, str] = field(default_factory=dict)
    processes: dict[str, list[Process]] = field(default_factory=dict)
    logs: list[IO[bytes]] = field(default_factory=list)
    controller: Controller | None = None

    # --- building ------------------------------------------------------------------------

    @classmethod
    def start(cls, network: Network) -> Deployment:
        folder = Path(tempfile.mkdtemp(prefix="sl5r-hosts-"))
        folder.chmod(0o755)  # the postgres user walks into its data directory
        deployment = cls(network, folder)
        try:
            deployment._secrets_make()
            # Each web machine collects its static files (most of the start-up: every file
            # compressed) while the data machine is made and the release run: they need
            # nothing of each other.
            with ThreadPoolExecutor(max_workers=len(APP_HOSTS)) as pool:
                collected = [pool.submit(deployment.static_collect, host) for host in APP_HOSTS]
                deployment.data_start()
                deployment._release()
                for done in collected:
                    done.result()
            for host in APP_HOSTS:
                deployment.app_boot(host)
            deployment.balancer_start()
            deployment.wait_serving()
        except BaseException:
            deployment.close()
            raise
        return deployment

    def _secrets_make(self) -> None:
        example = environment_file_read(DEPLOY / "sl5r.env.example")
        self.db_password = secrets.token_urlsafe(16)
        self.redis_password = secrets.token_urlsafe(16)
        self.shared_env = dict(example)
        self.shared_env["DATABASE_URL"] = example["DATABASE_URL"].replace(
            "CHANGE-ME", self.db_password
        )
        self.shared_env["REDIS_URL"] = example["REDIS_URL"].replace(
            "CHANGE-ME", self.redis_password
        )
        self.shared_env["SECRET_KEY"] = secrets.token_urlsafe(50)
        leftover = [k for k, v in self.shared_env.items() if "CHANGE-ME" in v]
        assert not leftover, f"sl5r.env.example has CHANGE-ME the harness does not fill: {leftover}"
        self.etc = self.folder / "etc-sl5r"
        self.etc.mkdir()
        environment_file_write(self.etc / "sl5r.env", self.shared_env)

    def host_dir(self, host: str) -> Path:
        path = self.folder / host
        path.mkdir(exist_ok=True)
        return path

    def _spawn(
        self,
        host: Host,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        user: str | None = None,
        cwd: Path = ROOT,
        nofile: int | None = None,
    ) -> Process:
        log_path = self.host_dir(host.name) / f"{name}.log"
        log = open(log_path, "ab")  # noqa: SIM115 - kept open for the process's life
        self.logs.append(log)
        command = host.command([*(["runuser", "-u", user, "--"] if user else []), *argv])

        def limits() -> None:
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        if nofile:
            nofile = files_allowed(nofile)

        popen = subprocess.Popen(
            command,
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=limits if nofile else None,
        )
        process = Process(f"{host.name}/{name}", popen, log_path)
        self.processes.setdefault(host.name, []).append(process)
        return process

    def run(
        self, host: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
        user: str | None = None, timeout: float = 120,
    ) -> str:  # fmt: skip
        """A command on ``host`` to its end; its output, or RuntimeError with it."""
        command = self.network[host].command(
            [*(["runuser", "-u", user, "--"] if user else []), *argv]
        )
        done = subprocess.run(
            command, env=dict(env or base_env()), cwd=ROOT, capture_output=True, text=True,
            timeout=timeout, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(
                f"{host}: {' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )
        return done.stdout

    # --- the data machine ----------------------------------------------------------------

    def data_start(self) -> None:
        data = self.network["data"]
        postgres_address, redis_address = data.addresses
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            raise RuntimeError("PostgreSQL's server programs are not installed (initdb)")
        bin_dir = Path(found[-1]).parent
        pg_dir = self.host_dir("data") / "postgres"
        sockets = self.host_dir("data") / "sockets"
        for path in (pg_dir, sockets):
            path.mkdir()
            shutil.chown(path, "postgres", "postgres")
        self.run(
            "data",
            [
                str(bin_dir / "initdb"),
                "-D",
                str(pg_dir),
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ],
            user="postgres",
        )
        with open(pg_dir / "pg_hba.conf", "a") as hba:
            hba.write("host all all 10.0.0.0/24 scram-sha-256\n")
        self._spawn(
            data, "postgres",
            [str(bin_dir / "postgres"), "-D", str(pg_dir), "-c",
             f"listen_addresses={postgres_address}", "-c", f"unix_socket_directories={sockets}",
             "-c", "fsync=off"],
            base_env(), user="postgres", cwd=pg_dir,
        )  # fmt: skip
        psql = [
            str(bin_dir / "psql"),
            "-h",
            str(sockets),
            "-U",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
        ]
        wait_for(
            lambda: _succeeds(data.command([*psql, "-c", "select 1"]), user="postgres"),
            READY_SECONDS, "PostgreSQL on the data host",
        )  # fmt: skip
        self.run("data", [*psql, "-c", f"create role sl5r login password '{self.db_password}'"],
                 user="postgres")  # fmt: skip
        self.run("data", [*psql, "-c", "create database sl5r owner sl5r"], user="postgres")
        self._spawn(
            data, "redis",
            ["redis-server", "--bind", redis_address, "--port", "6379", "--save", "",
             "--appendonly", "no", "--dir", str(self.host_dir("data")),
             "--requirepass", self.redis_password],
            base_env(),
        )  # fmt: skip

    # --- the web and worker machines -----------------------------------------------------

    def app_env(self, host: str, unit: Unit) -> dict[str, str]:
        """What systemd gives the unit's process on ``host``."""
        local = self.etc / f"local-{host}.env"
        if not local.exists():
            environment_file_write(
                local,
                {
                    "SL5R_ASGI_HOST": self.network[host].address,
                    "STATIC_ROOT": str(self.host_dir(host) / "static"),
                },
            )
        env = {**base_env(), **unit.environment}
        for path, required in unit.environment_files:
            real = {
                "/etc/sl5r/sl5r.env": self.etc / "sl5r.env",
                "/etc/sl5r/local.env": local,
            }.get(path)
            if real is None and required:
                raise RuntimeError(f"a unit reads {path}, which the harness does not make")
            if real is not None:
                env.update(environment_file_read(real))
        return env

    def _unit_start(self, host: str, unit_file: str, *, instance: str = "") -> Process:
        unit = Unit.read(DEPLOY / "systemd" / unit_file)
        env = self.app_env(host, unit)
        argv = [
            self._checkout(part.replace("/var/lib/sl5r", str(self.host_dir(host) / "state")))
            for part in unit.command(instance=instance, hostname=host, env=env)
        ]
        (self.host_dir(host) / "state").mkdir(exist_ok=True)
        name = unit_file.removesuffix(".service").replace("@", f"@{instance}")
        return self._spawn(
            self.network[host], name, argv, env, nofile=unit.limits.get("LimitNOFILE")
        )

    @staticmethod
    def _checkout(part: str) -> str:
        if part == f"{CHECKOUT}/.venv/bin/python":
            return sys.executable
        return part.replace(CHECKOUT, str(ROOT))

    def manage(self, host: str, *args: str, timeout: float = 300) -> str:
        """``python manage.py ARGS`` on ``host`` with its units' environment."""
        env = self.app_env(host, Unit.read(DEPLOY / "systemd" / "sl5r-asgi@.service"))
        return self.run(host, [sys.executable, "manage.py", *args], env=env, timeout=timeout)

    def _release(self) -> None:
        """What docs/deployment.md says to do once per release, from any one machine."""
        self.manage("app1", "migrate", "--noinput")
        self.manage("app1", "loadmap")

    def static_collect(self, host: str) -> None:
        """``collectstatic``, as the docs say to run at every update of a web machine."""
        self.manage(host, "collectstatic", "--noinput")

    def app_boot(self, host: str) -> None:
        """The units the docs enable on this machine, as systemd starts them when it boots
        (a machine back from a power cut runs no collectstatic): every web machine's ASGI
        process and worker, the one beat on app1."""
        self._unit_start(host, "sl5r-asgi@.service", instance=str(ASGI_PORT))
        self._unit_start(host, "sl5r-worker.service")
        if host == "app1":
            self._unit_start(host, "sl5r-beat.service")

    def unit_start(self, host: str, unit_file: str) -> None:
        self._unit_start(host, unit_file)

    def unit_stop(self, host: str, name: str) -> None:
        """``systemctl stop``: SIGTERM, as the units say, and wait for the end."""
        for process in list(self.processes.get(host, [])):
            if process.name == f"{host}/{name}":
                process.kill(signal.SIGTERM)
                self.processes[host].remove(process)

    def resolutions_by_host(self) -> dict[str, int]:
        """How many clock tasks each host's worker has finished with a turn resolved (Celery
        logs "Task … succeeded in …s: True", or the sweep's count)."""
        done = re.compile(r"Task referees\.\S+ succeeded in [\d.]+s: (True|[1-9]\d*)$", re.M)
        counts = {}
        for host in APP_HOSTS:
            log = self.folder / host / "sl5r-worker.log"
            text = log.read_text(errors="replace") if log.exists() else ""
            counts[host] = len(done.findall(text))
        return counts

    def host_kill(self, host: str) -> None:
        """Every process on ``host`` killed at once, as a machine that loses power."""
        for process in self.processes.pop(host, []):
            process.kill()

    # --- the balancer --------------------------------------------------------------------

    def balancer_start(self) -> None:
        folder = self.host_dir("balancer")
        key, cert = folder / "site.key", folder / "site.crt"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={SITE}",
             "-addext", f"subjectAltName=DNS:{SITE}"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        self.certificate = cert
        pem = folder / "site.pem"
        pem.write_bytes(cert.read_bytes() + key.read_bytes())
        pem.chmod(0o600)
        env = {**base_env(), **environment_file_read(DEPLOY / "balancer.env.example")}
        env["SL5R_BALANCER_CERT"] = str(pem)
        env["SL5R_BALANCER_STATS"] = str(folder / "haproxy.sock")
        config = env.pop("CONFIG").replace(CHECKOUT, str(ROOT))
        dropin = Unit.read(DEPLOY / "systemd" / "haproxy.service.d" / "sl5r.conf")
        files = files_allowed(dropin.limits["LimitNOFILE"])
        if files < dropin.limits["LimitNOFILE"]:
            env["SL5R_BALANCER_MAXCONN"] = str(balancer_maxconn(files))
        # Debian's haproxy.service runs "haproxy -Ws -f $CONFIG"; -db keeps it in the
        # foreground without systemd's notification.
        self._spawn(
            self.network["balancer"], "haproxy", ["haproxy", "-db", "-f", config], env,
            nofile=dropin.limits.get("LimitNOFILE"),
        )  # fmt: skip
        self.balancer_env = env

    def wait_serving(self) -> None:
        """Until HAProxy has both ASGI processes in service."""
        wait_for(
            lambda: self.servers() == {"asgi-1": "UP", "asgi-2": "UP"},
            READY_SECONDS,
            "both ASGI processes in service behind the balancer",
        )

    def balancer_ask(self, command: str) -> str:
        """A command of HAProxy's runtime API (its socket is a file: no network needed)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(10)
            try:
                connection.connect(self.balancer_env["SL5R_BALANCER_STATS"])
            except OSError:
                return ""
            connection.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def _stats(self, backend: str) -> dict[str, dict[str, str]]:
        lines = self.balancer_ask("show stat").splitlines()
        if not lines:
            return {}
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
        return {r["svname"]: r for r in rows if r.get("pxname") == backend and r["svname"]
                not in ("FRONTEND", "BACKEND")}  # fmt: skip

    def servers(self) -> dict[str, str]:
        """HAProxy's view of each ASGI process: UP, DOWN (with its check's detail)…"""
        return {name: row["status"] for name, row in self._stats("asgi").items()}

    def requests_served(self, backend: str = "asgi_writes") -> dict[str, int]:
        """How many requests HAProxy has sent each ASGI process in ``backend`` so far."""
        return {name: int(row["stot"] or 0) for name, row in self._stats(backend).items()}

    def websockets_held(self) -> dict[str, int]:
        """The pages' websockets HAProxy holds open to each ASGI process."""
        return {name: int(row["scur"] or 0) for name, row in self._stats("asgi_ws").items()}

    # --- the judge's side ----------------------------------------------------------------

    def control(self, command: str, **options: Any) -> dict[str, Any]:
        """``tests.hosts.control`` on app1, the machine that never dies here: its answer.
        One process serves every command (Django starts once), started at the first."""
        if self.controller is None or not self.controller.alive():
            if self.controller is not None:
                self.controller.close()
            env = self.app_env("app1", Unit.read(DEPLOY / "systemd" / "sl5r-asgi@.service"))
            log = self.host_dir("app1") / "control.log"
            self.controller = Controller(self.network["app1"], env, log)
        return self.controller.ask(command, options)

    # --- the end -------------------------------------------------------------------------

    def tails(self) -> str:
        return "\n".join(p.tail() for ps in self.processes.values() for p in ps)

    def close(self) -> None:
        if self.controller is not None:
            self.controller.close()
        for host in list(self.processes):
            self.host_kill(host)
        for log in self.logs:
            log.close()
        if not os.environ.get("SL5R_HOSTS_KEEP"):  # the processes' logs, to read afterwards
            shutil.rmtree(self.folder, ignore_errors=True)


class Controller:
    """``python -m tests.hosts.control serve`` on a host: commands over its standard input,
    answers read from its standard output (what else it writes goes to ``log``)."""

    def __init__(self, host: Host, env: Mapping[str, str], log: Path) -> None:
        self.prefix = ANSWER_PREFIX
        self.log = open(log, "ab")  # noqa: SIM115 - kept open for the process's life
        self.process = subprocess.Popen(
            host.command([sys.executable, "-m", "tests.hosts.control", "serve"]),
            env=dict(env), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log, text=True, start_new_session=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self.arrived = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.lock = threading.Lock()

    def _read(self) -> None:
        stdout: IO[str] = self.process.stdout  # type: ignore[assignment]
        for line in stdout:
            with self.arrived:
                if line.startswith(self.prefix):
                    self.lines.append(line[len(self.prefix) :])
                else:
                    with contextlib.suppress(ValueError):  # closed meanwhile
                        self.log.write(line.encode())
                self.arrived.notify_all()
        with self.arrived:
            self.arrived.notify_all()

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, command: str, options: Mapping[str, Any]) -> dict[str, Any]:
        with self.lock:
            stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
            stdin.write(json.dumps({"command": command, "options": dict(options)}) + "\n")
            stdin.flush()
            with self.arrived:
                self.arrived.wait_for(lambda: self.lines or not self.alive(), CONTROL_SECONDS)
                if not self.lines:
                    self.close()  # its late answer must not be taken for the next one's
                    raise RuntimeError(
                        f"control {command}: no answer in {CONTROL_SECONDS:g} s "
                        f"(exit status {self.process.poll()}; its output: {self.log.name})"
                    )
                answer: dict[str, Any] = json.loads(self.lines.pop(0))
        if "error" in answer:
            raise RuntimeError(f"control {command} failed on the host:\n{answer['error']}")
        return answer

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.log.close()


def files_allowed(wanted: int) -> int:
    """The file limit a unit's LimitNOFILE gives, within what this machine lets us raise to
    (root in a container without CAP_SYS_RESOURCE cannot pass its hard limit)."""
    return min(wanted, resource.getrlimit(resource.RLIMIT_NOFILE)[1])


def base_env() -> dict[str, str]:
    """What systemd starts every service with: no variable of the test run's own."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/root",
    }


def _succeeds(command: Sequence[str], *, user: str | None = None) -> bool:
    if user:
        # runuser must come after "ip netns exec <ns>": the namespace needs root.
        command = [*command[:4], "runuser", "-u", user, "--", *command[4:]]
    done = subprocess.run(command, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    return done.returncode == 0
