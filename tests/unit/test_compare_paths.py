"""Two paths to one GPU (roofline/compare/paths.py): a native run and a WebGPU run of the same GPU side by
side in ``compare``, a native figure far below WebGPU's flagged as a native-path defect, a ceiling only
the native path has given the WebGPU run's reason. The runs are tests/unit/data's saved H100 run and a
WebGPU run made from it (the device and ceilings replaced)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Dict, List, Sequence

from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.roofline.compare.compare import Comparison, compare_markdown
from apple_roofline.roofline.compare.paths import (
    NATIVE_BELOW,
    NATIVE_DEFECT,
    native_defects,
    path_pairs,
    paths_table,
    same_gpu,
)
from apple_roofline.roofline.model.run import Run
from apple_roofline.study.records import Skipped

DATA = Path(__file__).parent / "data"
FP64_REASON = "not reachable through WebGPU: WGSL has no f64 type"


def _cuda() -> Run:
    return Run.load(DATA / "run_h100.json")


def _rescaled(run: Run, scale: Dict[str, float], keep: Sequence[str] = ()) -> Run:
    """``run`` with each measurement of ceiling class ``c`` running at ``scale[c]`` × its rate (1 where
    not given), only the classes in ``keep`` where it is given, and the measured ceilings derived
    again from them, as a saved run is read."""
    kept = [m for m in run.measurements if not keep or m.ceiling_class in keep]
    scaled = [
        dataclasses.replace(m, samples_s=tuple(t / scale.get(m.ceiling_class or "", 1.0) for t in m.samples_s))
        for m in kept
    ]
    return Run.from_json(dataclasses.replace(run, measurements=tuple(scaled)).to_json())


def _webgpu(cuda: Run, scale: Dict[str, float], name: str = "") -> Run:
    """A WebGPU run of the same GPU: the CUDA run's DRAM and FMA-peak measurements, each class at
    ``scale[class]`` × its rate, FP64 skipped as the WebGPU backend skips it."""
    keep = ("DRAM bandwidth", "FP32 vector", "FP32 scalar ILP", "FP16 vector", "FP16 scalar ILP")
    device = {
        "backend": "wgpu",
        "name": name or cuda.device_name.upper().replace(" ", "  "),  # case and spacing aside
        "api": "Vulkan",
        "not_reachable": {"FP64": "WGSL has no f64 type"},
    }
    skipped = (Skipped("peak", "scalar_indep8", "fp64", FP64_REASON),)
    return _rescaled(dataclasses.replace(cuda, device=device, skipped=skipped), scale, keep)


def _rows(md: str, title_start: str) -> Dict[str, List[str]]:
    sec = md.split(f"## {title_start}", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in sec.splitlines() if ln.startswith("| ")]
    return {r[0]: r for r in rows[2:]}


def test_a_native_and_a_webgpu_run_of_one_gpu_are_paired() -> None:
    cuda = _cuda()
    webgpu = _webgpu(cuda, {})
    other = _webgpu(cuda, {}, name="AMD Radeon 780M")
    assert same_gpu(cuda, webgpu) and not same_gpu(cuda, other)
    assert path_pairs([cuda, other, webgpu]) == [(0, 2)]
    assert path_pairs([webgpu, cuda]) == [(1, 0)]
    assert path_pairs([cuda, cuda]) == [] and path_pairs([webgpu, webgpu]) == []


def test_the_section_sets_each_ceiling_beside_the_other_path() -> None:
    cuda = _cuda()
    webgpu = _webgpu(cuda, {"FP16 scalar ILP": 0.69})
    md = compare_markdown(Comparison((cuda, webgpu)))
    rows = _rows(md, "Two paths to NVIDIA H100 80GB HBM3: CUDA (A) and WebGPU on Vulkan (B)")
    assert rows["FP32 vector"][4] == "1.000×" and rows["FP32 vector"][5] == "—"
    assert rows["FP16 scalar ILP"][4] == "0.690×" and rows["FP16 scalar ILP"][5] == "—"  # WebGPU below: no flag
    assert rows["FP64"][3] == "—" and rows["FP64"][5] == FP64_REASON
    assert rows["GEMM FP32"][5] == "not measured through WebGPU"
    assert "WebGPU reached 0.690–1.000× of the CUDA path's figure on the 5 measured ceilings both have." in md
    assert "Not reachable through WebGPU: FP64: WGSL has no f64 type." in md


def test_a_native_figure_far_below_webgpu_is_flagged() -> None:
    cuda = _cuda()
    native = _rescaled(cuda, {"FP32 vector": NATIVE_BELOW * 0.99, "DRAM bandwidth": NATIVE_BELOW * 1.01})
    webgpu = _webgpu(cuda, {})
    _, table = paths_table([native, webgpu], ["A", "B"], 0, 1)
    notes = {r[0]: r[5] for r in table.rows}
    assert notes["FP32 vector"] == NATIVE_DEFECT and notes["DRAM bandwidth"] == "—"
    lines = native_defects([native, webgpu], ["A", "B"])
    assert len(lines) == 1 and lines[0].startswith("FP32 vector: CUDA (A) ") and NATIVE_DEFECT in lines[0]
    assert native_defects([cuda, webgpu], ["A", "B"]) == []


def test_compare_prints_each_native_defect(tmp_path: Path) -> None:
    cuda = _cuda()
    a, b = tmp_path / "cuda.json", tmp_path / "wgpu.json"
    _rescaled(cuda, {"FP32 vector": 0.5}).save(a)
    _webgpu(cuda, {}).save(b)
    result = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert "## Two paths to NVIDIA H100 80GB HBM3" in result.stdout
    defects = [ln for ln in result.stderr.splitlines() if ln.startswith("native-path defect: ")]
    assert len(defects) == 1 and defects[0].startswith("native-path defect: FP32 vector: CUDA (A)"), result.stderr


def test_the_html_page_holds_the_section() -> None:
    from apple_roofline.roofline.compare.compare_html import compare_html

    cuda = _cuda()
    page = compare_html(Comparison((cuda, _webgpu(cuda, {}))))
    assert "Two paths to NVIDIA H100 80GB HBM3: CUDA (A) and WebGPU on Vulkan (B)" in page


def test_runs_from_two_hosts_say_so() -> None:
    cuda = _cuda()
    webgpu = dataclasses.replace(_webgpu(cuda, {}), host={**cuda.host, "hostname": "other-node"})
    title, _ = paths_table([cuda, webgpu], ["A", "B"], 0, 1)
    assert title.endswith(f"(two hosts: {', '.join(sorted([cuda.host.get('hostname') or '?', 'other-node']))})")
    same, _ = paths_table([cuda, _webgpu(cuda, {})], ["A", "B"], 0, 1)
    assert "two hosts" not in same
