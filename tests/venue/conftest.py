"""The venue's end-to-end tests: laptops made in the test's folder, killed at its end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.venue.laptop import Laptop


@pytest.fixture
def laptops(tmp_path: Path) -> Iterator[Callable[[str], Laptop]]:
    made: list[Laptop] = []

    def make(name: str) -> Laptop:
        laptop = Laptop(root=tmp_path / name)
        laptop.root.mkdir()
        made.append(laptop)
        return laptop

    yield make
    for laptop in made:
        laptop.kill()
