"""Separate machines on one Linux host: network namespaces on a private bridge.

Each *host* is a network namespace with its own loopback and one interface, ``eth0``, with
the addresses ``docs/deployment.md`` gives its machine ("On several machines"): the
balancer 10.0.0.10, the web machines 10.0.0.11 and 10.0.0.12, the data machine 10.0.0.20
(PostgreSQL) and 10.0.0.21 (Redis), and the phones 10.0.0.100. Their ``eth0`` is one end of
a veth pair whose other end is a port of a bridge in a *switch* namespace of its own: the
hosts reach each other and nothing else (no route out, no address in the machine's own
namespace), so the documented addresses cannot clash with a real network.

A host "dies" as a machine does for the others: ``cut`` takes its switch port down (its
packets are lost; connections to it hang until their timeouts, none is refused), ``mend``
brings it back. Its processes are stopped by whoever started them.

Namespaces are named ``sl5r<run>-<host>`` with ``<run>`` this process's id, so two runs on
one machine do not meet; ``Network.close`` deletes them, and a new ``Network`` first deletes
those left by runs whose process is gone (a test killed halfway).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SUBNET_BITS = 24
# The machines of docs/deployment.md's example; the phones stand for the venue's Wi-Fi.
ADDRESSES: Mapping[str, tuple[str, ...]] = {
    "balancer": ("10.0.0.10",),
    "app1": ("10.0.0.11",),
    "app2": ("10.0.0.12",),
    "data": ("10.0.0.20", "10.0.0.21"),
    "phones": ("10.0.0.100", "10.0.0.101"),  # two phones' addresses
}
NAME_PREFIX = "sl5r"
ETC_NETNS = Path("/etc/netns")
NAME_PATTERN = re.compile(rf"^{NAME_PREFIX}(\d+)-")


class NetworkUnavailable(Exception):
    """Namespaces cannot be made here (not root, no ``ip``, a container without the right)."""


def _ip(*args: str, namespace: str | None = None, check: bool = True) -> str:
    command = ["ip", *(["-n", namespace] if namespace else []), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def network_problem() -> str | None:
    """``None`` when this process may make network namespaces, else why not."""
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    name = f"{NAME_PREFIX}{os.getpid()}-probe"
    done = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if done.returncode != 0:
        return f"ip netns add: {done.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def stale_namespaces_delete() -> None:
    """Delete the namespaces of runs whose process is gone."""
    for line in _ip("netns", "list").splitlines():
        name = line.split()[0] if line.strip() else ""
        match = NAME_PATTERN.match(name)
        if match and not Path(f"/proc/{match.group(1)}").exists():
            _ip("netns", "del", name, check=False)
            shutil.rmtree(ETC_NETNS / name, ignore_errors=True)


@dataclass(frozen=True)
class Host:
    name: str
    namespace: str
    addresses: tuple[str, ...]
    port: str  # its veth end on the switch

    @property
    def address(self) -> str:
        return self.addresses[0]

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside this host's namespace."""
        return ["ip", "netns", "exec", self.namespace, *argv]


class Network:
    """The hosts of ``ADDRESSES`` on one bridge; ``close`` removes everything."""

    def __init__(self, hosts: Mapping[str, tuple[str, ...]] = ADDRESSES) -> None:
        stale_namespaces_delete()
        run = os.getpid()
        self.switch = f"{NAME_PREFIX}{run}-switch"
        self.hosts: dict[str, Host] = {}
        try:
            _ip("netns", "add", self.switch)
            _ip("link", "add", "br0", "type", "bridge", namespace=self.switch)
            _ip("link", "set", "br0", "up", namespace=self.switch)
            for index, (name, addresses) in enumerate(hosts.items()):
                self.hosts[name] = self._host_add(run, index, name, addresses)
        except Exception:
            self.close()
            raise

    def _host_add(self, run: int, index: int, name: str, addresses: tuple[str, ...]) -> Host:
        namespace = f"{NAME_PREFIX}{run}-{name}"
        _ip("netns", "add", namespace)
        # Interface names are made in the switch, then the host's end is moved: names only
        # need to be unique per namespace, and at most 15 characters.
        port = f"p{index}"
        _ip(
            "link", "add", port, "type", "veth", "peer", "name", "eth0",
            "netns", namespace, namespace=self.switch,
        )  # fmt: skip
        _ip("link", "set", port, "master", "br0", namespace=self.switch)
        _ip("link", "set", port, "up", namespace=self.switch)
        _ip("link", "set", "lo", "up", namespace=namespace)
        for address in addresses:
            _ip("addr", "add", f"{address}/{SUBNET_BITS}", "dev", "eth0", namespace=namespace)
        _ip("link", "set", "eth0", "up", namespace=namespace)
        return Host(name, namespace, addresses, port)

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def cut(self, name: str) -> None:
        """The host is off the network: what it sends and what is sent to it is lost."""
        _ip("link", "set", self.hosts[name].port, "down", namespace=self.switch)

    def mend(self, name: str) -> None:
        _ip("link", "set", self.hosts[name].port, "up", namespace=self.switch)

    def names_resolve(self, name: str, names: Mapping[str, str]) -> None:
        """``names`` (name → address) in the host's /etc/hosts, as a DNS server would give
        them: ``ip netns exec`` puts /etc/netns/<namespace>/hosts in place of /etc/hosts."""
        folder = ETC_NETNS / self.hosts[name].namespace
        folder.mkdir(parents=True, exist_ok=True)
        lines = ["127.0.0.1 localhost", *(f"{a} {n}" for n, a in names.items())]
        (folder / "hosts").write_text("\n".join(lines) + "\n")

    def close(self) -> None:
        for host in self.hosts.values():
            for pid in _ip("netns", "pids", host.namespace, check=False).split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            shutil.rmtree(ETC_NETNS / host.namespace, ignore_errors=True)
            _ip("netns", "del", host.namespace, check=False)
        _ip("netns", "del", self.switch, check=False)
        self.hosts = {}
