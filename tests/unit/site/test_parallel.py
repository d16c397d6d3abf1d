"""Pages rendered on every core are the pages rendered one by one (generator.site.parallel)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from generator.commands.build import build
from generator.site import parallel
from tests.support.demo import BuiltSite, copy_demo_data


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="workers are forked (Linux)")
@pytest.mark.usefixtures("write_in_process")
def test_a_build_on_several_cores_is_byte_for_byte_the_same(tmp_path: Path, monkeypatch: Any) -> None:
    one = BuiltSite(copy_demo_data(tmp_path / "one"), tmp_path / "one-site")
    build(one.paths, one.out, offline=True, full=True)
    used: list[int] = []
    original = parallel.RenderPool.render

    def spy(self: parallel.RenderPool, *args: Any) -> None:
        used.append(self._pool is not None)
        original(self, *args)

    monkeypatch.setattr(parallel, "MIN_PAGES", 0)
    monkeypatch.setattr(parallel.RenderPool, "render", spy)
    many = BuiltSite(copy_demo_data(tmp_path / "many"), tmp_path / "many-site")
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    build(many.paths, many.out, offline=True, full=True)
    assert used and all(used), "the pages were not rendered by workers"
    assert many.files() == one.files()


def test_a_failing_page_fails_the_build_from_a_worker(tmp_path: Path, monkeypatch: Any) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("workers are forked (Linux)")
    monkeypatch.setattr(parallel, "MIN_PAGES", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    site = BuiltSite(copy_demo_data(tmp_path / "d"), tmp_path / "site")

    def broken(*args: Any) -> str:
        raise RuntimeError("a template that fails")

    monkeypatch.setattr(parallel, "render_page", broken)
    with pytest.raises(RuntimeError, match="a template that fails"):
        build(site.paths, site.out, offline=True, full=True)
    assert not site.out.exists() or not any(site.out.iterdir())
