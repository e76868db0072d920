"""The map drawing (strategic_map/drawing/): Voronoi cells, ridges, layouts. Pure Python."""

from __future__ import annotations

import ast
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from sl5r.rules.mapgraph import rokugan_map
from strategic_map import drawing as drawing_module
from strategic_map.drawing import (
    CLAN_STYLES,
    MapDrawing,
    map_drawing,
    point_in_polygon,
    polygon_area,
)

DRAWING_FILE = Path(drawing_module.__file__)


def rokugan() -> dict[str, Any]:
    return rokugan_map().to_dict()


def three_provinces() -> dict[str, Any]:
    return {
        "id": "tiny",
        "name": "Tiny",
        "width": 300,
        "height": 200,
        "provinces": [
            {"id": "a", "name": "A", "home_clan": "crab", "castle": "Keep", "x": 60, "y": 100},
            {"id": "b", "name": "B", "home_clan": None, "castle": None, "x": 150, "y": 60},
            {"id": "c", "name": "C", "home_clan": "lion", "castle": None, "x": 240, "y": 110},
        ],
        "borders": [["a", "b"]],
    }


def random_map(n: int, seed: int, *, coordinates: bool = True) -> dict[str, Any]:
    rng = random.Random(seed)
    provinces = []
    for i in range(n):
        row: dict[str, Any] = {"id": f"p{i}", "name": f"Province {i}", "home_clan": None}
        if coordinates:
            row["x"] = rng.uniform(0, 1000)
            row["y"] = rng.uniform(0, 800)
        provinces.append(row)
    borders = [[f"p{i}", f"p{rng.randrange(n)}"] for i in range(n) if n > 1]
    borders = [b for b in borders if b[0] != b[1]]
    return {"id": f"random-{n}", "name": "Random", "provinces": provinces, "borders": borders}


def assert_cells_tile_the_canvas(drawing: MapDrawing, samples: int = 3000) -> None:
    """Every cell is a closed, non-empty polygon inside the canvas; no point is in two."""
    for shape in drawing.provinces:
        assert len(shape.polygon) >= 3, shape.id
        assert shape.path.startswith("M") and shape.path.endswith("Z"), shape.id
        assert polygon_area(shape.polygon) > 0, shape.id
        for x, y in shape.polygon:
            assert -1e-6 <= x <= drawing.width + 1e-6, (shape.id, x)
            assert -1e-6 <= y <= drawing.height + 1e-6, (shape.id, y)
        assert point_in_polygon(shape.label, shape.polygon), shape.id
    rng = random.Random(7)
    for _ in range(samples):
        p = (rng.uniform(0, drawing.width), rng.uniform(0, drawing.height))
        inside = [s.id for s in drawing.provinces if point_in_polygon(p, s.polygon)]
        assert len(inside) <= 1, (p, inside)


def test_the_bundled_map_draws_every_province_once() -> None:
    data = rokugan()

    drawing = map_drawing(data)

    assert [p.id for p in drawing.provinces] == [p["id"] for p in data["provinces"]]
    assert (drawing.width, drawing.height) == (1000, 800)
    assert drawing.view_box == "0 0 1000 800"
    assert not drawing.laid_out
    assert_cells_tile_the_canvas(drawing)


def test_labels_fit_on_the_canvas() -> None:
    """A name near the edge is set smaller rather than cut off (Asahina Lands, east coast)."""
    drawing = map_drawing(rokugan())

    for shape in drawing.provinces:
        half = drawing_module.LABEL_WIDTH * shape.label_size * len(shape.name) / 2
        assert half <= shape.label[0] <= drawing.width - half, shape.id


def test_the_bundled_maps_labels_all_keep_their_full_size() -> None:
    """On a phone's whole-map view the smallest label is what limits legibility: with the
    coast inside the frame no edge province (Asahina Lands) needs a smaller one."""
    drawing = map_drawing(rokugan())

    small = [p.id for p in drawing.provinces if p.label_size < drawing.label_size]

    assert small == []


def test_the_frame_shows_the_whole_coast_with_sea_around_it() -> None:
    """Asako, Asahina, Doji, Shizuka lie on the bundled map's edges: the view box holds every
    province's polygon with a strip of sea, so no coast is cut straight by the frame."""
    drawing = map_drawing(rokugan())
    x0, y0, w, h = (float(v) for v in drawing.view_box.split())
    sea = 0.01 * min(w, h)

    for shape in drawing.provinces:
        for x, y in shape.polygon:
            assert x0 + sea <= x <= x0 + w - sea, (shape.id, x)
            assert y0 + sea <= y <= y0 + h - sea, (shape.id, y)


def test_each_cell_holds_its_own_site_and_nearest_points() -> None:
    """Voronoi: a point of a cell is nearer to that cell's site than to any other."""
    drawing = map_drawing(rokugan())
    sites = {p.id: p.site for p in drawing.provinces}
    rng = random.Random(3)
    checked = 0
    while checked < 500:
        point = (rng.uniform(0, 1000), rng.uniform(0, 800))
        owner = next((p for p in drawing.provinces if point_in_polygon(point, p.polygon)), None)
        if owner is None:
            continue  # the sea
        checked += 1
        nearest = min(sites, key=lambda pid: math.dist(point, sites[pid]))
        assert math.dist(point, sites[nearest]) == pytest.approx(
            math.dist(point, owner.site), abs=0.5
        )


def test_rokugan_borders_are_shared_edges_and_the_rest_are_ridges() -> None:
    graph = rokugan_map()
    drawing = map_drawing(graph.to_dict())
    borders = {frozenset(b) for b in graph.borders}

    touching = {frozenset((e.a, e.b)) for e in drawing.edges}
    ridges = {frozenset((e.a, e.b)) for e in drawing.ridges}
    linked = {frozenset((link.a, link.b)) for link in drawing.links}

    assert ridges == touching - borders
    # Every border is either a shared edge (drawn plain) or a dashed link.
    assert borders <= (touching - ridges) | linked
    assert all(e.border == (frozenset((e.a, e.b)) in borders) for e in drawing.edges)
    assert all(r.path.startswith("M") for r in drawing.ridges)


def test_three_provinces_border_and_ridge() -> None:
    drawing = map_drawing(three_provinces())

    edges = {frozenset((e.a, e.b)): e for e in drawing.edges}

    assert edges[frozenset("ab")].border is True
    assert edges[frozenset("bc")].border is False  # touching, no border: a ridge
    assert {frozenset((r.a, r.b)) for r in drawing.ridges} == {frozenset("bc")}
    a = drawing.province("a")
    assert a is not None and a.castle == "Keep" and a.castle_at is not None
    assert a.neighbours == ("b",)
    assert drawing.province("b").castle_at is None  # type: ignore[union-attr]
    assert_cells_tile_the_canvas(drawing)


def test_a_border_between_cells_that_do_not_touch_is_a_link() -> None:
    data = three_provinces()
    data["borders"] = [["a", "c"]]

    drawing = map_drawing(data)

    assert [(link.a, link.b) for link in drawing.links] == [("a", "c")]
    assert frozenset("ac") not in {frozenset((e.a, e.b)) for e in drawing.edges}


def test_impassable_provinces_are_listed_for_hatching() -> None:
    data = three_provinces()
    data["provinces"][2]["impassable"] = True

    drawing = map_drawing(data)

    assert [p.id for p in drawing.impassable] == ["c"]


def test_a_map_without_coordinates_is_laid_out_deterministically() -> None:
    data = rokugan()
    for province in data["provinces"]:
        province.pop("x", None)
        province.pop("y", None)
    data.pop("width", None)
    data.pop("height", None)

    first = drawing_module._draw(data)
    again = drawing_module._draw(json.loads(json.dumps(data)))

    assert first.laid_out
    assert [p.path for p in first.provinces] == [p.path for p in again.provinces]
    assert len(first.provinces) == 39
    assert_cells_tile_the_canvas(first)


def test_provinces_missing_coordinates_go_next_to_their_neighbours() -> None:
    data = rokugan()
    data["provinces"][0].pop("x")  # Utaku Lands, beside Shinjo and Iuchi
    data["provinces"][0].pop("y")

    drawing = map_drawing(data)

    assert drawing.laid_out
    assert_cells_tile_the_canvas(drawing)
    utaku = drawing.province("unicorn-utaku")
    shinjo = drawing.province("unicorn-shinjo")
    assert utaku is not None and shinjo is not None
    assert math.dist(utaku.site, shinjo.site) < 300


@pytest.mark.parametrize(
    "provinces",
    [
        [{"id": "only"}],
        [{"id": "a", "x": 10, "y": 10}, {"id": "b", "x": 10, "y": 10}],  # one spot
        [{"id": f"p{i}", "x": i * 100, "y": 400} for i in range(6)],  # in a line
        [{"id": "a", "x": -500, "y": 9000}, {"id": "b", "x": 4000, "y": -30}],  # off-canvas
        [{"id": "a", "x": 1, "y": 2}, {"id": "b"}, {"id": "c"}],  # b, c unconnected
    ],
)
def test_awkward_maps_still_draw_every_province(provinces: list[dict[str, Any]]) -> None:
    drawing = map_drawing({"id": "odd", "provinces": provinces, "borders": []})

    assert [p.id for p in drawing.provinces] == [p["id"] for p in provinces]
    assert_cells_tile_the_canvas(drawing, samples=500)


def test_an_empty_or_broken_map_draws_nothing_without_failing() -> None:
    assert map_drawing({}).provinces == ()
    assert map_drawing({"provinces": "nope", "borders": 3}).provinces == ()


def test_a_random_500_province_map_is_drawn_whole_with_smaller_labels() -> None:
    data = random_map(500, seed=11)

    drawing = drawing_module._draw(data)

    assert len(drawing.provinces) == 500
    assert drawing.label_size < map_drawing(rokugan()).label_size  # smaller cells, smaller text
    assert_cells_tile_the_canvas(drawing, samples=1500)
    borders = {frozenset(b) for b in data["borders"]}
    for edge in drawing.edges:
        assert edge.border == (frozenset((edge.a, edge.b)) in borders)


def test_a_random_map_without_coordinates_draws() -> None:
    drawing = map_drawing(random_map(120, seed=5, coordinates=False))

    assert drawing.laid_out
    assert_cells_tile_the_canvas(drawing, samples=1000)


def test_the_drawing_is_cached_by_the_map_json() -> None:
    data = rokugan()

    first = map_drawing(data)
    same = map_drawing(json.loads(json.dumps(data)))
    data["provinces"][0]["name"] = "Renamed"
    changed = map_drawing(data)

    assert same is first
    assert changed is not first
    assert changed.provinces[0].name == "Renamed"


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_clans_differ_by_pattern_and_shape_and_colours_have_contrast() -> None:
    """Colour-blind players tell clans apart by pattern and marker shape (WCAG 1.4.11)."""
    styles = list(CLAN_STYLES.values())

    assert len(styles) == 8
    assert len({s.pattern for s in styles}) == 8
    assert len({s.pattern_path for s in styles}) == 8
    assert len({s.shape for s in styles}) == 8
    for style in styles:
        assert _contrast(style.colour, "#fbf8f2") >= 3, style.clan  # markers on the page
        assert _contrast(style.colour, "#ffffff") >= 3, style.clan  # white marker outline
        assert _contrast("#1d1d1f", style.tint) >= 7, style.clan  # labels on a province


@pytest.mark.parametrize(
    "module", sorted(DRAWING_FILE.parent.glob("*.py")), ids=lambda path: path.name
)
def test_no_drawing_module_imports_django(module: Path) -> None:
    """Geometry, layout, styles and SVG are plain Python (relative imports only)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    imported = {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and not node.level
    } | {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }

    assert not imported & {"django", "referees", "strategic_map", "ninja", "battles"}
