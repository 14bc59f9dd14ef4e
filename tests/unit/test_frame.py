"""The frame every study shares: the results-document header, one loader for every kind, typed option
errors, device names resolved without opening devices, provenance, the text helpers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import apple_roofline as ar
from apple_roofline import devices
from apple_roofline.dispatch.model import DispatchStudy, LatencySeries
from apple_roofline.errors import OptionError, check_int
from apple_roofline.host import provenance
from apple_roofline.results import KINDS, load_results, parse_results
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.options import array_bytes_range, check_array_bytes, parse_suites
from apple_roofline.study import Document, ResultsError, ToolInfo
from apple_roofline.text import date_of, frequency, key_value_pairs, markdown_table, one_line, sig_figs, text_table
from apple_roofline.timing.measure import MAX_REPS, check_reps

DATA = Path(__file__).parent / "data"
HEADER = {"kind", "schema_version", "tool", "created", "host", "device", "command", "warnings", "complete"}


def _study(m5_run: Run) -> DispatchStudy:
    series = (LatencySeries("null", "round_trip", "native", "host", (1e-5, 2e-5, 3e-5)),)
    return DispatchStudy(
        tool=m5_run.tool,
        created=m5_run.created,
        host={},
        device={"backend": "cpu", "name": "x"},
        command=("apple-roofline", "dispatch"),
        params={"reps": 3},
        series=series,
        finished="2026-11-20T12:40:00+00:00",
    )


def test_every_kind_writes_the_same_header(m5_run: Run) -> None:
    for doc, kind in ((m5_run, "roofline"), (_study(m5_run), "dispatch")):
        d = doc.to_dict()
        assert HEADER <= set(d), kind
        assert d["kind"] == kind and d["schema_version"] == 1
        assert {k: d[k] for k in HEADER if k != "kind"} == {
            k: v for k, v in doc.header_dict().items() if k in HEADER and k != "kind"
        }
    assert "finished" not in m5_run.to_dict() and _study(m5_run).to_dict()["finished"] == "2026-11-20T12:40:00+00:00"


def test_header_fields_after_command_are_keyword_only(m5_run: Run) -> None:
    run = Run(
        m5_run.tool, "2026-01-02", {}, {"backend": "cpu", "name": "x"}, ("cmd",), m5_run.measurements, m5_run.ceilings
    )  # the positional order of schema 1's Run
    assert run.measurements == m5_run.measurements and run.complete is True and run.warnings == ()
    with pytest.raises(ValueError, match="device must contain 'name'"):
        Run(m5_run.tool, "x", {}, {"backend": "cpu"}, ())


def test_load_results_reads_every_kind(tmp_path: Path, m5_run: Run) -> None:
    assert set(KINDS) == {"roofline", "dispatch", "graphics", "calls", "engines", "tune", "kernels"}
    m5_run.save(tmp_path / "run.json")
    _study(m5_run).save(tmp_path / "dispatch.json")
    assert load_results(tmp_path / "run.json") == m5_run
    assert load_results(tmp_path / "dispatch.json") == _study(m5_run)
    assert ar.load_results(tmp_path / "run.json") == m5_run


def test_schema_1_files_without_kind_are_roofline_runs() -> None:
    d = json.loads((DATA / "run_epyc_2vcpu.json").read_text())
    assert "kind" not in d  # written before the key existed
    run = parse_results(d, source="old.json")
    assert isinstance(run, Run) and run.measurements
    again = Run.from_json(run.to_json())
    assert again == run and json.loads(run.to_json())["kind"] == "roofline"


def test_a_file_of_one_kind_is_not_read_as_another(tmp_path: Path, m5_run: Run) -> None:
    _study(m5_run).save(tmp_path / "d.json")
    with pytest.raises(ResultsError, match=r"d\.json: kind is 'dispatch', not 'roofline'"):
        Run.load(tmp_path / "d.json")
    d = m5_run.to_dict()
    with pytest.raises(ResultsError, match="kind is 'roofline', not 'dispatch'"):
        DispatchStudy.from_dict(d, source="r.json")
    with pytest.raises(ResultsError, match="kind is missing, not 'dispatch'"):
        DispatchStudy.from_dict({k: v for k, v in _study(m5_run).to_dict().items() if k != "kind"})
    with pytest.raises(
        ResultsError,
        match=r"x\.json: kind 'render' is not a kind of results file "
        r"\(valid: roofline, dispatch, graphics, calls, engines, tune, kernels\)",
    ):
        parse_results({**d, "kind": "render"}, source="x.json")


def test_the_base_document_round_trips(m5_run: Run) -> None:
    @dataclasses.dataclass(frozen=True)
    class Probe(Document):
        KIND = "probe"

    doc = Probe(
        tool=ToolInfo("t", "1", None),
        created="c",
        host={"h": 1},
        device={"backend": "cpu", "name": "n"},
        command=("a",),
        warnings=("w",),
        complete=False,
    )
    assert Probe.from_json(doc.to_json()) == doc
    assert doc.backend == "cpu" and doc.device_name == "n"


def test_option_errors_name_the_parameter_and_the_range() -> None:
    with pytest.raises(OptionError) as e:
        check_reps(0)
    assert str(e.value) == f"reps 0 is out of range (valid: 1 to {MAX_REPS})"
    assert e.value.describe("--reps") == f"--reps 0 is out of range (valid: 1 to {MAX_REPS})"
    with pytest.raises(OptionError, match="reps 'x' is not an integer"):
        check_reps("x")
    with pytest.raises(OptionError, match="is not an integer"):
        check_int(True, "n", 0)  # a bool is not a count
    assert check_int(5, "n", 0) == 5 and isinstance(OptionError("a", 1, "b"), ValueError)
    with pytest.raises(OptionError) as e2:
        parse_suites("stream,foo")
    assert e2.value.option == "suites" and "valid: stream, sweep, peak, gemm" in str(e2.value)


def test_array_bytes_limits_live_in_the_runner() -> None:
    info = {"name": "box", "memory_bytes": 6 << 30}
    assert array_bytes_range(info) == (4096, 1 << 30)
    assert check_array_bytes(1 << 30, info) == 1 << 30
    with pytest.raises(OptionError) as e:
        check_array_bytes((1 << 30) + 1, info)
    assert e.value.option == "array_bytes"
    assert "three arrays must fit in half of the 6 GiB memory of box (valid: 4 KiB to 1 GiB)" in str(e.value)
    assert array_bytes_range({})[1] is None


def test_devices_resolve_from_the_registry_without_opening(fake_registry: None) -> None:
    assert devices.resolve_device("cpu") == devices.DeviceSpec("cpu", 0) == ("cpu", 0)
    assert devices.resolve_device(None) == ("cpu", 0) and devices.default_device() == "cpu"
    backend, index = devices.parse_device("cuda:3")
    assert (backend, index) == ("cuda", 3) and str(devices.DeviceSpec("cuda", 3)) == "cuda:3"
    with pytest.raises(OptionError) as e:
        devices.resolve_device("cuda:0")
    assert e.value.option == "device"
    assert str(e.value) == "device 'cuda:0' is not available: libcuda.so.1 not found (valid: cpu)"
    with pytest.raises(OptionError, match="Metal is built on macOS only"):
        devices.resolve_device("metal")
    with pytest.raises(OptionError, match="'gpu' is not a device"):
        devices.resolve_device("gpu")


def test_provenance() -> None:
    h = provenance.host()
    assert {"hostname", "os", "machine", "python", "numpy", "logical_cpus"} <= set(h)
    assert date_of(provenance.now()) == provenance.now()[:10]
    tool = ToolInfo.current()
    assert tool.name == "apple_roofline" and tool.version == ar.__version__


def test_text_helpers() -> None:
    assert [sig_figs(x) for x in (3849.2, 6.4683, 0.5, 2.5e7, 0.0)] == ["3,849", "6.47", "0.500", "2.5e+07", "0"]
    assert frequency(3.44e9) == "3.44 GHz" and frequency(8e8) == "800 MHz"
    assert key_value_pairs({"a": 1, "b": None, "c": {"x": 1}, "clock_hz": 2e9}) == "a=1, b=—, clock_hz=2.00 GHz"
    assert date_of("2026-11-20T12:34:56+00:00") == "2026-11-20" and date_of(" junk ") == "junk"
    assert one_line("first\nsecond") == "first (...)" and one_line(ValueError()) == "ValueError"
    assert markdown_table(["a|b"], [["x\ny"]], "r") == ["| a\\|b |", "| ---: |", "| x y |"]
    assert text_table(["k", "value"], [["long key", "v"]]) == ["k         value", "--------  -----", "long key  v"]
