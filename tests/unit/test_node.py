"""Every GPU of a node at once (apple_roofline.node, cli/node.py): device lists, the cores' split,
the children (two real CPU runs sharing this machine stand in for two GPUs), Ctrl-C/SIGTERM
forwarding with partial results kept, and node.md flagging a GPU whose saved run was degraded on
purpose (tests/unit/data/run_h100.json twice, one with a ceiling 10 % low)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest
from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.devices import DeviceSpec
from apple_roofline.dispatch.model import DispatchStudy, LatencySeries
from apple_roofline.errors import OptionError
from apple_roofline.host.cpus import POOL_ENVS, THREADS_ENV, host_threads, usable_cpus
from apple_roofline.node import Child, Member, find_outliers, measure_node, node_children, parse_device_list, split_cpus
from apple_roofline.node.children import child_env, python_child
from apple_roofline.node.report import node_dict, node_markdown, nvml_serials, with_serials
from apple_roofline.roofline.model.run import Run
from apple_roofline.suites.blocks import map_row_blocks

DATA = Path(__file__).parent / "data"
H100 = DATA / "run_h100.json"
#: A quick CPU run of one suite: seconds on this 2-core machine.
CPU_ARGS = ("run", "--device", "cpu", "--suite", "stream", "--quick", "--reps", "2", "--array-bytes", "8MiB")


# -- device lists and shares -----------------------------------------------------------


def test_device_lists() -> None:
    counts = {"cuda": 4}
    assert parse_device_list("cuda:all", counts) == [DeviceSpec("cuda", i) for i in range(4)]
    assert parse_device_list("cuda:0,2,3", counts) == [
        DeviceSpec("cuda", 0),
        DeviceSpec("cuda", 2),
        DeviceSpec("cuda", 3),
    ]
    assert parse_device_list("CUDA:3,1,3", counts) == [DeviceSpec("cuda", 3), DeviceSpec("cuda", 1)]


@pytest.mark.parametrize(
    "text, counts, message",
    [
        (
            "cpu:all",
            {"cpu": 1},
            "--device 'cpu:all' is not a device list: a list names GPUs of one backend; cpu is one device",
        ),
        ("cuda:all", {"cuda": 0}, "--device 'cuda:all' names no device: no cuda device found"),
        (
            "cuda:0,4",
            {"cuda": 4},
            "--device 'cuda:0,4' is not a device list: 4 is no cuda device of the 4 found "
            "(valid: cuda indices 0 to 3, or cuda:all)",
        ),
        ("cuda:0,x", {"cuda": 2}, "x is no cuda device of the 2 found"),
        ("vulkan:all", {}, "is not a device list"),
    ],
)
def test_bad_device_lists(text: str, counts: Dict[str, int], message: str) -> None:
    with pytest.raises(OptionError) as err:
        parse_device_list(text, counts)
    assert message in err.value.describe("--device")


def test_split_cpus() -> None:
    assert split_cpus(list(range(16)), 2) == [list(range(8)), list(range(8, 16))]
    assert split_cpus(list(range(10)), 4) == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert split_cpus([0, 1], 3) == [[0], [1], [0]]  # fewer CPUs than children: one each, shared
    with pytest.raises(ValueError):
        split_cpus([], 2)


def test_child_env_limits_every_pool() -> None:
    env = child_env([4, 5, 6], {"PATH": "/bin"})
    assert env["PATH"] == "/bin" and all(env[k] == "3" for k in (THREADS_ENV, *POOL_ENVS))
    assert child_env([], {"PATH": "/bin"}) == {"PATH": "/bin"}


def test_host_pools_honour_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the limit at 1 the validation's row blocks run on the calling thread alone."""
    seen: List[int] = []
    lock = threading.Lock()

    def note(s: slice) -> int:
        with lock:
            seen.append(threading.get_ident())
        time.sleep(0.01)
        return s.start

    monkeypatch.setenv(THREADS_ENV, "1")
    assert host_threads() == 1
    rows = map_row_blocks(note, 64, 1 << 20)  # 64 rows of 8 MiB float64: 64 blocks
    assert rows == sorted(rows) and set(seen) == {threading.get_ident()}
    monkeypatch.setenv(THREADS_ENV, "junk")
    assert host_threads() == len(usable_cpus())


# -- the children: two CPU runs sharing this machine -------------------------------------


def test_progress_ticks_show_each_childs_latest_line(tmp_path: Path) -> None:
    from apple_roofline.node.children import last_line, run_children

    code = "import sys, time; print('[peak] 3/40 working', flush=True); time.sleep(1.5); sys.exit(int(sys.argv[1]))"
    kids = [Child(f"k{i}", [sys.executable, "-c", code, str(i)], tmp_path / f"k{i}") for i in range(2)]
    ticks: List[List[str]] = []
    results = run_children(kids, on_tick=lambda running: ticks.append([last_line(c) for c in running]), tick_s=0.5)
    assert [r.returncode for r in results] == [0, 1] and not any(r.stopped for r in results)
    assert ["[peak] 3/40 working"] * 2 in ticks


def cpu_children(out: Path, args: Sequence[str] = CPU_ARGS) -> List[Child]:
    shares = split_cpus(usable_cpus(), 2)
    return [
        Child(f"cpu{i}", python_child(*args, "--out", str(out / f"cpu{i}")), out / f"cpu{i}", shares[i])
        for i in range(2)
    ]


def test_two_cpu_children_at_once(tmp_path: Path) -> None:
    children = cpu_children(tmp_path)
    node = measure_node(children, "run.json", tmp_path, outlier_pct=90.0, title="two CPU children")
    assert [r.returncode for r in node.results] == [0, 0]
    for child, member in zip(children, node.members):
        run = member.doc
        assert isinstance(run, Run) and run.complete and run.valid_measurements
        assert member.file == f"{child.name}/run.json" and (child.out / "child.log").stat().st_size > 0
        # each child ran on its own share of the cores, and said so in its provenance
        assert run.host["usable_cpus"] == len(child.cpus) == run.host["host_threads"] == run.device["threads"]
    md = (tmp_path / "node.md").read_text()
    assert md.startswith("# Node: two CPU children") and "| cpu0 |" in md and "| cpu1 |" in md
    assert json.loads((tmp_path / "node.json").read_text())["gpus"][1]["complete"] is True


_PARENT = """
import sys
from pathlib import Path
from apple_roofline.node import Child, measure_node
from apple_roofline.node.children import python_child
out = Path(sys.argv[1])
args = ["run", "--device", "cpu", "--suite", "stream,sweep,peak", "--reps", "10"]
kids = [Child(f"cpu{i}", python_child(*args, "--out", str(out / f"cpu{i}")), out / f"cpu{i}") for i in range(2)]
node = measure_node(kids, "run.json", out)
print("codes", [r.returncode for r in node.results], "stopped", [r.stopped for r in node.results], flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_every_child_and_keeps_their_partial_results(tmp_path: Path, sig: int) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env
    )
    logs = [tmp_path / f"cpu{i}" / "child.log" for i in range(2)]
    deadline = time.monotonic() + 120.0
    while not all(p.exists() and "[stream] 1/" in p.read_text() for p in logs):  # both have measured something
        assert parent.poll() is None and time.monotonic() < deadline, "the children did not start measuring"
        time.sleep(0.2)
    parent.send_signal(sig)
    stdout, _ = parent.communicate(timeout=120)
    assert parent.returncode == 0, stdout
    assert "codes [130, 130] stopped [True, True]" in stdout
    for i in range(2):
        run = Run.load(tmp_path / f"cpu{i}" / "run.json")
        assert not run.complete and run.measurements  # the partial results each child had
    gpus = json.loads((tmp_path / "node.json").read_text())["gpus"]
    assert [g["status"] for g in gpus] == ["INTERRUPTED — partial results"] * 2


# -- node.md on saved runs ------------------------------------------------------------------


def degraded(run: Run, name: str, factor: float, bus: str) -> Run:
    ceilings = [
        dataclasses.replace(c, value=c.value * factor) if (c.name, c.source) == (name, "measured") else c
        for c in run.ceilings
    ]
    return dataclasses.replace(run.with_ceilings(ceilings), device={**run.device, "pci_bus_id": bus})


class FakeNvml:
    """pynvml's calls that nvml_serials makes, for two boards."""

    SERIALS = {b"0000:00:06.0": b"1652321000001", b"0000:00:07.0": b"1652321000002"}

    def nvmlInit(self) -> None: ...

    def nvmlShutdown(self) -> None: ...

    def nvmlDeviceGetHandleByPciBusId(self, bus: bytes) -> bytes:
        if bus not in self.SERIALS:
            raise RuntimeError("NVML_ERROR_NOT_FOUND")
        return bus

    def nvmlDeviceGetSerial(self, handle: bytes) -> bytes:
        return self.SERIALS[handle]


def h100_node(factor: float) -> List[Member]:
    good = Run.load(H100)
    bad = degraded(good, "DRAM bandwidth", factor, "0000:00:07.0")
    members = [Member("cuda0", "cuda:0", good, "cuda0/run.json"), Member("cuda1", "cuda:1", bad, "cuda1/run.json")]
    return with_serials(members, nvml_serials([m.pci_bus_id for m in members], module=FakeNvml()))


def test_node_md_flags_the_gpu_with_a_ceiling_10_percent_low() -> None:
    members = h100_node(0.90)
    (o,) = find_outliers(members, 3.0)
    # two GPUs: the median is their mean, so 0.90 of the good one is 5.3 % below it
    assert (o.member.name, o.metric.name) == ("cuda1", "DRAM bandwidth")
    assert o.worse_pct == pytest.approx(100 * (1 - 0.90 / 0.95))
    md = node_markdown(members, 3.0, title="h100-node")
    (line,) = [ln for ln in md.splitlines() if ln.startswith("- ")]
    dram = next(c.value for c in members[0].doc.ceilings if c.name == "DRAM bandwidth")  # type: ignore[union-attr]
    assert line == (
        f"- **cuda1** (cuda:1, PCI 0000:00:07.0, serial 1652321000002): DRAM bandwidth "
        f"{_sig(dram * 0.9)} GB/s is 5.3 % below the node's median {_sig(dram * 0.95)} GB/s"
    )
    row = next(ln for ln in md.splitlines() if ln.startswith("| DRAM bandwidth |"))
    assert "**" in row.split("|")[4] and "**" not in row.split("|")[3]  # cuda1's cell in bold, cuda0's not
    assert "| cuda0 | cuda:0 | NVIDIA H100 80GB HBM3 | 0000:00:06.0 | 1652321000001 | complete |" in md
    d = node_dict(members, 3.0)
    assert [(x["gpu"], x["metric"], x["serial"]) for x in d["outliers"]] == [
        ("cuda1", "DRAM bandwidth", "1652321000002")
    ]


def _sig(x: float) -> str:
    from apple_roofline.text import sig_figs

    return sig_figs(x)


def test_within_the_threshold_nothing_is_flagged() -> None:
    members = h100_node(0.98)  # 1 % below the median
    assert find_outliers(members, 3.0) == []
    assert "None: every GPU is within 3 % of the node's median on every metric." in node_markdown(members, 3.0)
    assert [o.member.name for o in find_outliers(members, 0.5)] == ["cuda1"]


def test_a_gpu_without_results_or_a_ceiling_is_flagged() -> None:
    good = Run.load(H100)
    fewer = good.with_ceilings([c for c in good.ceilings if c.name != "GEMM INT8"])
    members = [
        Member("cuda0", "cuda:0", good),
        Member("cuda1", "cuda:1", fewer),
        Member("cuda2", "cuda:2", None, note="exit 1; see cuda2/child.log"),
    ]
    lines = [o.sentence() for o in find_outliers(members)]
    assert lines == [
        "**cuda1** (cuda:1, PCI 0000:00:06.0, serial unknown): no GEMM INT8, which the other GPUs have",
        "**cuda2** (cuda:2, PCI unknown, serial unknown): no results (exit 1; see cuda2/child.log)",
    ]


def test_dispatch_node_flags_a_slower_gpu() -> None:
    base = Run.load(H100)

    def study(us: float) -> DispatchStudy:
        s = LatencySeries("null", "round_trip", "native", "host", (us * 1e-6,) * 5)
        return DispatchStudy(
            tool=base.tool, created=base.created, host=base.host, device=base.device, command=base.command, series=(s,)
        )

    members = [Member(f"cuda{i}", f"cuda:{i}", study(us)) for i, us in enumerate((10.0, 10.1, 12.0))]
    (o,) = find_outliers(members, 3.0)
    assert o.member.name == "cuda2" and o.metric.unit == "µs" and not o.metric.higher_is_better
    assert "is 18.8 % above the node's median 10.1 µs" in o.sentence()


def test_serials_without_nvml() -> None:
    class NoDriver(FakeNvml):
        def nvmlInit(self) -> None:
            raise RuntimeError("NVML_ERROR_DRIVER_NOT_LOADED")

    assert nvml_serials(["0000:00:06.0"], module=NoDriver()) == {}
    assert nvml_serials(["0000:00:06.0", "0000:00:99.0"], module=FakeNvml()) == {"0000:00:06.0": "1652321000001"}


# -- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command, extra, results",
    [
        ("run", ["--suite", "stream,peak", "--quick", "--reps", "3", "--budget", "none"], "run.json"),
        ("dispatch", ["--reps", "20", "--no-peers"], "dispatch.json"),
    ],
)
def test_cli_device_list_starts_one_child_per_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, extra: List[str], results: str
) -> None:
    import apple_roofline.node as node_pkg
    import apple_roofline.node.devices as node_devices

    monkeypatch.setattr(node_devices, "backend_registry", lambda: [{"name": "cuda", "compiled": True, "devices": 4}])
    seen: Dict[str, Any] = {}

    def fake_measure_node(children: Sequence[Child], results_file: str, out: Path, **kw: Any) -> Any:
        seen.update(children=list(children), results_file=results_file, out=out, **kw)
        return node_pkg.NodeResult([], [], [], [], 1.0)

    monkeypatch.setattr(node_pkg, "measure_node", fake_measure_node)
    r = CliRunner().invoke(app, [command, "--device", "cuda:0,2", *extra, "--out", str(tmp_path), "--outlier-pct", "5"])
    assert r.exit_code == 0, r.output
    assert seen["results_file"] == results and seen["outlier_pct"] == 5.0 and seen["devices"] == ["cuda:0", "cuda:2"]
    children: List[Child] = seen["children"]
    assert [c.name for c in children] == ["cuda0", "cuda2"]
    for c, dev in zip(children, ("cuda:0", "cuda:2")):
        assert list(c.argv[:4]) == [sys.executable, "-m", "apple_roofline", command]
        # the options as parsed, each by its long flag (the test passes them so), then this GPU's
        assert list(c.argv[4:]) == [*extra, "--device", dev, "--out", str(tmp_path / c.name)]
        assert c.out == tmp_path / c.name
    assert set(children[0].cpus).isdisjoint(children[1].cpus) or len(usable_cpus()) < 2


def test_cli_bad_device_list_and_outlier_pct(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["run", "--device", "cpu:all", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "cpu is one device" in r.stderr
    r = CliRunner().invoke(app, ["run", "--device", "cuda:all", "--outlier-pct", "-1", "--out", str(tmp_path)])
    assert (
        r.exit_code == 2
        and "--outlier-pct '-1' is out of range (valid: a finite number of percent, 0 or more)" in r.stderr
    )


def test_node_children_split_the_cores(tmp_path: Path) -> None:
    kids = node_children([DeviceSpec("cuda", 0), DeviceSpec("cuda", 1)], "run", ["--quick"], tmp_path, cpus=range(8))
    assert [list(k.cpus) for k in kids] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert list(kids[1].argv[3:]) == ["run", "--quick", "--device", "cuda:1", "--out", str(tmp_path / "cuda1")]
