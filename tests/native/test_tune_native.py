"""The tuning study and ``run --tune`` against this machine's real extension: the CPU has no
threadgroup size, so both say so in one line and exit 2; the CPU kernels report no block facts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from apple_roofline.cli.app import app


def test_cpu_kernel_has_no_block_facts() -> None:
    from apple_roofline._native import _core
    from apple_roofline.shaders import resolve

    k = _core.Backend("cpu", 0).compile(*resolve("kernels.cpp", "stream_copy_f32"), {})
    assert (k.block, k.simd_width, k.max_block) == (0, 0, 0)


@pytest.mark.parametrize(
    "args", [["tune", "-d", "cpu"], ["run", "--tune", "-d", "cpu", "-s", "stream", "--array-bytes", "64KiB"]]
)
def test_cpu_has_no_threadgroup_to_tune(args: list, tmp_path: Path) -> None:  # type: ignore[type-arg]
    r = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert "has no threadgroup size to tune" in r.output and len(r.output.strip().splitlines()) == 1
