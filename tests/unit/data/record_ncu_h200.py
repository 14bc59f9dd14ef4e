"""Record the Nsight Compute fixtures ``ncu_h200_{totals,roofline,hierarchical}_raw.csv`` (and
``ncu_h200_details.csv``) on a CUDA machine: ``python3 record_ncu_h200.py OUTDIR``.

The workload (``--workload``, profiled between cudaProfilerStart and Stop, two launches of each
kernel after two unprofiled warm-ups): a cuBLAS SGEMM and HGEMM (torch.matmul, 4096³, TF32 off),
a STREAM triad (CuPy, 2^25 floats), an integer-only kernel (CuPy, int32) and a kernel doing FP32
and FP64 work (CuPy). Each output is checked after profiling. The profile is collected three ways:
the totals (instruction counts, the tensor pipe's instruction count but no
``sm__ops_path_tensor_src_*``, and the simple byte totals), ``--set roofline``, and the
hierarchical roofline sections with the totals README.md names; each is exported with
``ncu --import X.ncu-rep --page raw --csv``, and the details page of the roofline set once.
Needs ncu, PyTorch and CuPy; writes OUTDIR/progress.log as it goes and OUTDIR/ncu_fixtures.tar.gz.

The fixtures are, of that archive: ``ncu_h200_{way}_raw_used.csv`` (the raw page filtered by ncu's
own ``--metrics`` to the columns the import reads) as ``ncu_h200_{way}_raw.csv``,
``ncu_h200_hierarchical_details.csv`` as ``ncu_h200_details.csv``, and
``python3 record_ncu_h200.py --chart ncu_h200_roofline_details_all.csv ncu_h200_roofline_chart.csv``:
ncu's own chart rows (each achieved value with any work, and each launch's duration).
"""

from __future__ import annotations

import csv
import glob
import os
import shutil
import subprocess
import sys
import tarfile
import time

N = 4096
ELEMENTS = 1 << 25
OPS = ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma", "hadd", "hmul", "hfma")
TOTALS = ",".join(
    ["gpu__time_duration.sum", "dram__bytes.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum"]
    + [f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in OPS]
    + ["sm__inst_executed_pipe_tensor.sum"]
)
HIERARCHICAL = [
    a
    for s in ("Single", "Half", "Double", "Tensor")
    for a in ("--section", f"SpeedOfLight_Hierarchical{s}RooflineChart")
] + ["--metrics", "gpu__time_duration.sum,dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum"]
#: The raw page's metrics the reader uses (a filter for the import, where ncu takes one).
USED = (
    "regex:^(gpu__time_duration.sum|device__attribute_display_name|dram__bytes.sum.*|lts__t_bytes.sum.*"
    "|l1tex__t_bytes.sum.*|derived__lts__lts2xbar_bytes.sum.per_second"
    "|derived__l1tex__lsu_writeback_bytes_mem_lgds?.sum.per_second|(sm|smsp)__cycles_elapsed.avg.per_second"
    "|(sm|smsp)__sass_thread_inst_executed_op_[dfh](add|mul|fma)_pred_on.sum.*|sm__inst_executed_pipe_tensor.*"
    "|lts__lts2xbar_cycles_active.sum.per_second|l1tex__lsu_writeback_active_mem_lgds?.sum.per_second"
    "|sm__ops_path_tensor_src_.*sum.*)$"
)
WAYS = {
    "totals": ["--metrics", TOTALS],
    "roofline": ["--set", "roofline"],
    "hierarchical": HIERARCHICAL,
}


def workload() -> None:
    import cupy as cp
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    a32 = torch.randn(N, N, device="cuda")
    b32 = torch.randn(N, N, device="cuda")
    a16, b16 = a32.half(), b32.half()
    b = cp.random.rand(ELEMENTS, dtype=cp.float32)
    c = cp.random.rand(ELEMENTS, dtype=cp.float32)
    a = cp.empty_like(b)
    m = cp.empty_like(b)
    xi = cp.arange(ELEMENTS, dtype=cp.int32)
    yi = xi[::-1].copy()
    zi = cp.empty_like(xi)
    triad = cp.ElementwiseKernel("float32 b, float32 c, float32 s", "float32 a", "a = b + s * c", "stream_triad")
    imix = cp.ElementwiseKernel("int32 x, int32 y", "int32 z", "z = (x * 7 + y) ^ (x >> 3)", "int_mix")
    mixed = cp.ElementwiseKernel(
        "float32 x, float32 y",
        "float32 z",
        "float t = x; for (int i = 0; i < 8; ++i) t = t * y + x; double d = (double)x * 1.0000001 + (double)y;"
        " z = t + (float)d;",
        "mixed_f32_f64",
    )

    def work() -> tuple:
        c32 = a32 @ b32
        c16 = a16 @ b16
        triad(b, c, cp.float32(3.0), a)
        imix(xi, yi, zi)
        mixed(b, c, m)
        return c32, c16

    for _ in range(2):
        work()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _ in range(2):
        c32, c16 = work()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    ref = (a32.double() @ b32.double()).float()
    err32 = ((c32 - ref).abs().max() / ref.abs().max()).item()
    err16 = ((c16.float() - ref).abs().max() / ref.abs().max()).item()
    assert err32 < 1e-5 and err16 < 1e-2, (err32, err16)
    assert bool(cp.allclose(a, b + 3 * c)), "triad"
    x, y = xi.astype(cp.int64), yi.astype(cp.int64)
    assert bool(cp.all(zi == ((x * 7 + y) ^ (x >> 3)).astype(cp.int32))), "int_mix"
    assert bool(cp.all(cp.isfinite(m))), "mixed"
    print(f"workload checked: SGEMM max rel err {err32:.2e}, HGEMM {err16:.2e}, triad, int_mix, mixed", flush=True)


def find_ncu() -> str:
    found = shutil.which("ncu") or next(
        iter(sorted(glob.glob("/usr/local/cuda*/bin/ncu") + glob.glob("/opt/nvidia/nsight-compute/*/ncu"))), None
    )
    if found is None:
        raise SystemExit("no ncu found")
    return found


class Recorder:
    """The recording's folders and log: ``out`` (progress.log and the archive), ``out/work`` (what is
    archived)."""

    def __init__(self, out: str) -> None:
        os.makedirs(out, exist_ok=True)
        self.out = out
        self.work = os.path.join(out, "work")
        os.makedirs(self.work, exist_ok=True)
        self.log = open(os.path.join(out, "progress.log"), "a", buffering=1)

    def say(self, msg: str) -> None:
        """A timestamped progress line, on stdout and in progress.log."""
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        self.log.write(line + "\n")

    def sh(self, cmd: list, dest: str | None = None, timeout: float = 300) -> int:
        """Run cmd, its stdout into ``work/dest`` (else kept for the log); logs the command, its exit
        status and time, and the output's tail where it failed or has no file. Returns the exit status."""
        path = os.path.join(self.work, dest) if dest else None
        self.say("$ " + " ".join(cmd) + (f" > {dest}" if dest else ""))
        t0 = time.time()
        with open(path, "w") if path else open(os.devnull, "w") as f:
            p = subprocess.run(
                cmd, stdout=f if path else subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout
            )
        tail = (p.stderr or "")[-1500:] + ("" if path else (p.stdout or "")[-1500:])
        self.say(f"  rc {p.returncode} in {time.time() - t0:.1f} s" + (f"\n{tail}" if p.returncode or not path else ""))
        return p.returncode

    def pack(self) -> None:
        """Archive work/ (its reports left out) as ncu_fixtures.tar.gz: after each step, so that a run
        cut short still brings back what it made."""
        with tarfile.open(os.path.join(self.out, "ncu_fixtures.tar.gz"), "w:gz") as tar:
            for f in sorted(os.listdir(self.work)):
                if not f.endswith(".ncu-rep"):
                    tar.add(os.path.join(self.work, f), arcname=f)


def record_versions(rec: Recorder, ncu: str) -> None:
    """ncu's version and sets, the GPU (nvidia-smi) and torch's and CuPy's versions, into work/."""
    rec.sh([ncu, "--version"], "ncu_version.txt")
    rec.sh(
        ["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,memory.total", "--format=csv"],
        "nvidia_smi.csv",
    )
    rec.sh(
        [sys.executable, "-c", "import torch, cupy; print(torch.__version__, torch.version.cuda, cupy.__version__)"],
        "versions.txt",
    )
    rec.sh([ncu, "--list-sets"], "ncu_sets.txt")


def profile(rec: Recorder, ncu: str, way: str, args: list) -> None:
    """Profile the workload (this script with ``--workload``) one way into ``work/ncu_h200_<way>``;
    where the roofline set is missing, its chart sections instead."""
    me = os.path.abspath(__file__)
    rep = os.path.join(rec.work, f"ncu_h200_{way}")
    base = [ncu, "--clock-control", "none", "--profile-from-start", "off"]
    workload_cmd = ["-f", "-o", rep, sys.executable, me, "--workload"]
    rc = rec.sh([*base, *args, *workload_cmd], f"{way}_profile.log", timeout=150)
    if rc and way == "roofline":  # an ncu without the set: the chart section itself
        sections = ["--section", "SpeedOfLight", "--section", "SpeedOfLight_RooflineChart"]
        rec.sh([*base, *sections, *workload_cmd], f"{way}_profile2.log", timeout=150)


def export(rec: Recorder, ncu: str, way: str) -> None:
    """The way's report exported as CSV: the raw page, whole and filtered to USED, and the details
    page, plain and with every detail."""
    imp = [ncu, "--import", os.path.join(rec.work, f"ncu_h200_{way}") + ".ncu-rep"]
    rec.sh([*imp, "--page", "raw", "--csv"], f"ncu_h200_{way}_raw.csv")
    rec.sh([*imp, "--page", "raw", "--csv", "--metrics", USED], f"ncu_h200_{way}_raw_used.csv")
    rec.sh([*imp, "--page", "details", "--csv"], f"ncu_h200_{way}_details.csv")
    rec.sh([*imp, "--page", "details", "--csv", "--print-details", "all"], f"ncu_h200_{way}_details_all.csv")


def copy_sections(rec: Recorder, ncu: str) -> None:
    """Copy the roofline chart section files of ncu's installation (and of /usr/local, /opt/nvidia,
    /root) into work/."""
    roots = [os.path.dirname(os.path.dirname(os.path.realpath(ncu))), "/usr/local", "/opt/nvidia", "/root"]
    sections = {
        os.path.basename(s): s
        for r in roots
        for s in glob.glob(os.path.join(r, "**", "SpeedOfLight*Roofline*.section"), recursive=True)
    }
    rec.say(f"sections: {sorted(sections.values())}")
    for sec in sections.values():
        shutil.copy(sec, rec.work)


def main(out: str) -> None:
    """Record the fixtures into out (module docstring)."""
    rec = Recorder(out)
    ncu = find_ncu()
    record_versions(rec, ncu)
    for way, args in WAYS.items():
        profile(rec, ncu, way, args)
        export(rec, ncu, way)
        rec.pack()
    copy_sections(rec, ncu)
    rec.pack()
    shutil.rmtree(rec.work)
    rec.say("done")


def chart(details_all: str, out: str) -> None:
    """ncu's chart rows of a ``--page details --csv --print-details all`` export (module docstring)."""
    with open(details_all, newline="") as f:
        rows = list(csv.reader(f))
    h = rows[0]
    cols = ["ID", "Section Name", "Body Item Label", "Metric Name", "Metric Unit", "Metric Value"]
    idx = [h.index(c) for c in cols]
    groups: dict = {}
    for r in rows[1:]:
        item, metric = r[h.index("Body Item Label")], r[h.index("Metric Name")]
        if "Achieved Value" in item or metric == "Duration":
            groups.setdefault((r[0], r[h.index("Section Name")], item), []).append(r)
    with open(out, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(cols)
        for (_id, _section, item), g in groups.items():
            work = [r for r in g if "Per Cycle" in r[h.index("Metric Name")]]
            if item and all(float(r[h.index("Metric Value")].replace(",", "") or 0) == 0 for r in work):
                continue
            w.writerows([r[i] for i in idx] for r in g)


if __name__ == "__main__":
    if sys.argv[1:] == ["--workload"]:
        workload()
    elif sys.argv[1:2] == ["--chart"]:
        chart(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "ncu_out")
