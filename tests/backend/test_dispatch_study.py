"""The dispatch-latency study end to end (apple_roofline.dispatch.run_dispatch and the
``apple-roofline dispatch`` command) on every backend with a device: every series present, valid
and of the right shape; bad options rejected before measuring; the files written and read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

pytest.importorskip("apple_roofline._native")

from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.dispatch import DispatchStudy, binding_cost, pair_order, run_dispatch
from apple_roofline.dispatch.run import runner as dispatch_runner
from apple_roofline.errors import OptionError

#: The steps each backend's timeline names (core/backend.h, Timeline).
STEPS: Dict[str, tuple] = {
    "cpu": ("wake", "fork", "join"),
    "cuda": ("launch", "start", "complete"),
    "metal": ("create", "encode", "commit", "start", "execute", "complete"),
}


@pytest.fixture(scope="module")
def studies() -> Dict[str, DispatchStudy]:
    from apple_roofline._native import _core

    available = [str(b["name"]) for b in _core.backends() if b["compiled"] and int(b["devices"]) > 0]
    return {
        name: run_dispatch(name if name == "cpu" else f"{name}:0", reps=12, launches=5, warmup=3, peers=False)
        for name in available
    }


def test_every_series_is_measured_and_valid(studies: Dict[str, DispatchStudy]) -> None:
    assert "cpu" in studies
    for name, st in studies.items():
        assert st.complete and st.valid, [s.validation for s in st.series if not s.valid]
        for kernel in ("null", "tiny"):
            for measure, path, clock in (
                ("throughput", "native", "device"),
                ("throughput", "native", "host"),
                ("throughput", "python", "host"),
                ("round_trip", "native", "host"),
                ("round_trip", "python", "host"),
                ("start_latency", "native", "host"),
            ):
                s = st.find(kernel, measure, path, clock)
                assert s is not None, (name, kernel, measure, path, clock)
                assert len(s.samples_s) == 12
                assert s.launches_per_sample == (5 if measure == "throughput" else 1)
            steps = [s.step for s in st.series if s.kernel == kernel and s.measure == "step"]
            assert tuple(steps) == STEPS[name]
            tiny = st.find("tiny", "round_trip", "python")
            assert tiny is not None and "== 12 after 12 launches" in tiny.validation
        assert st.params["reps"] == 12 and st.device["backend"] == name
        # The start latency is the sum of the steps from the submit to the start.
        start = st.find("null", "start_latency", "native")
        assert start is not None and start.distribution.max < 1.0


def test_native_and_python_are_interleaved(studies: Dict[str, DispatchStudy]) -> None:
    for name, st in studies.items():
        pairs = {(p.kernel, p.measure) for p in st.pairings}
        assert pairs == {(k, m) for k in ("null", "tiny") for m in ("throughput", "round_trip")}, name
        for p in st.pairings:
            assert p.first == pair_order(12) and p.confidence == 0.95
            d = st.paired(p.kernel, p.measure)
            assert d is not None and d.n == 12 and d.low_s <= d.median_s <= d.high_s
            assert d.coverage >= 0.95 and d.status in ("resolved", "includes_zero", "negative", "wider_than_effect")
        costs = binding_cost(st)
        assert len(costs) == 4 and all(c.paired is not None for c in costs)
        for measure, launches in (("throughput", 12 * 5), ("round_trip", 12)):
            for path in ("native", "python"):  # each path counted in its own buffer
                s = st.find("tiny", measure, path, "host")
                assert s is not None and f"== {launches} after {launches} launches" in s.validation, s.validation
                assert "interleaved" in s.note


def test_interleaving_order_on_the_cpu_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner takes each pair's two samples back to back, the first path alternating, for every
    kernel and measure: native python | python native | native python ..."""
    calls: list = []
    real = dispatch_runner.interleave

    def spy(samplers: Any, order: Any) -> Any:
        def wrap(path: str) -> Any:
            def sample() -> float:
                calls.append(path)
                return float(samplers[path]())

            return sample

        return real({p: wrap(p) for p in samplers}, order)

    monkeypatch.setattr(dispatch_runner, "interleave", spy)
    st = run_dispatch("cpu", reps=5, launches=3, warmup=1, peers=False)
    one = ["native", "python", "python", "native", "native", "python", "python", "native", "native", "python"]
    assert calls == one * 4  # null throughput, null round trip, tiny throughput, tiny round trip
    assert st.valid and len(st.pairings) == 4


def test_study_round_trips_through_json(studies: Dict[str, DispatchStudy], tmp_path: Path) -> None:
    st = studies["cpu"]
    st.save(tmp_path / "d.json")
    assert DispatchStudy.load(tmp_path / "d.json") == st


@pytest.mark.parametrize(
    "kw, option, message",
    [
        ({"reps": 0}, "reps", "reps 0 is out of range (valid: 1 to 100000)"),
        ({"launches": 100_001}, "launches", "launches 100001 is out of range (valid: 1 to 100000)"),
        ({"warmup": -1}, "warmup", "warmup -1 is out of range (valid: 0 to 100000)"),
        ({"reps": 1.5}, "reps", "reps 1.5 is not an integer"),
        ({"reps": 100_000, "launches": 1000}, "reps", "float32 counts"),
    ],
)
def test_bad_counts_are_rejected(kw: Dict[str, Any], option: str, message: str) -> None:
    with pytest.raises(OptionError) as exc:
        run_dispatch("cpu", **kw)
    assert exc.value.option == option and message in str(exc.value)


def test_cli_writes_the_study_plot_and_report(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "o"
    r = runner.invoke(
        app, ["dispatch", "-d", "cpu", "--reps", "8", "--launches", "4", "--warmup", "2", "--no-peers", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    for f in ("dispatch.json", "dispatch.md", "dispatch.png"):
        assert (out / f).stat().st_size > 0, f
    assert "null" in r.stdout and "p50" in r.stdout and "binding" in r.stdout
    assert "null throughput: binding python − native = " in r.stdout and "median of 8 paired differences" in r.stdout
    assert r.stdout.count("resolved") == 4  # "resolved" or "not resolved: ..." for each kernel and measure
    assert len(json.loads((out / "dispatch.json").read_text())["pairings"]) == 4
    assert json.loads((out / "dispatch.json").read_text())["kind"] == "dispatch"
    p = runner.invoke(app, ["plot", str(out / "dispatch.json"), "-o", str(tmp_path / "h.svg")])
    assert p.exit_code == 0, p.output
    assert (tmp_path / "h.svg").read_text().lstrip().startswith("<?xml")
    c = runner.invoke(app, ["report", str(out / "dispatch.json"), "--format", "csv"])
    assert c.exit_code == 0 and "round_trip" in c.stdout
    bad = runner.invoke(app, ["plot", str(out / "dispatch.json"), "--point", "k:1:1:1"])
    assert bad.exit_code == 2 and "dispatch study" in bad.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--reps", "0"], "--reps 0 is out of range (valid: 1 to 100000)"),
        (["--launches", "x"], "--launches 'x' is not an integer"),
        (["--warmup", "-5"], "--warmup -5 is out of range"),
        (["--device", "tpu"], "--device"),
    ],
)
def test_cli_bad_options_exit_2(args: list, message: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["dispatch", "--no-peers", "-o", str(tmp_path), *args])
    assert r.exit_code == 2 and message in r.output, r.output
    assert not (tmp_path / "dispatch.json").exists()
