"""docs/design/extending.md, "Adding a suite", kept true: a suite added as one folder, and no other file, is
measured by ``run --suite``, kept in run.json, shown in report.md and report.html, drawn as a figure
and named in the command line's help.

The toy suite is written into a temporary folder that is put on the suites package's path
(:mod:`apple_roofline.suites.registry` discovers the subpackages of ``apple_roofline.suites.__path__``), so
the repository's files stay as they are. Its kernel is one the CPU backend already has built in (STREAM's
copy); the rest is the toy's own: a kernel table with named fields, FLOP and byte formulas, a NumPy reference
and check, two sweep forms (the default one and the one a run that names its suites takes), a rule that makes
a ceiling of its measurements (a name ``run --ceilings`` accepts), a warning, a device fact, a report table, a
figure and a budget. The command runs in a child process that adds the folder before the command line is
built, as a folder dropped into ``suites/`` is found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

import apple_roofline.suites as suites_package

TOY: Dict[str, str] = {
    "__init__.py": '"""A toy suite: STREAM copy at two sizes, registered by :mod:`.spec`."""\n',
    "kernels.py": '''
        """The toy's kernel table (named fields), its counting and its NumPy reference."""
        from dataclasses import dataclass

        import numpy as np

        from ..base import KernelDef


        @dataclass(frozen=True)
        class ToyKernel:
            label: str
            entry: str
            bytes_per_elem: int
            flops_per_elem: int

            def kernel_def(self) -> KernelDef:
                return KernelDef("toy", self.label, "fp32", {"cpu": ("kernels.cpp", self.entry)})

            def reference(self, a: np.ndarray) -> np.ndarray:
                return a.copy()


        TOY_KERNELS = (ToyKernel(label="copy", entry="stream_copy_f32", bytes_per_elem=8, flops_per_elem=0),)
        #: elements per array by sweep form
        FORMS = {"default": (4096,), "named": (4096, 65536)}
        FORM_OPTION = "toy_form"
        ''',
    "suite.py": '''
        """The toy's cases: inputs written, output poisoned, checked against NumPy."""
        from functools import partial

        import numpy as np

        from ..base import PERIOD, Case, Suite, check_tiled, fill, pattern, poison, read
        from .kernels import FORM_OPTION, FORMS, TOY_KERNELS


        class ToySuite(Suite):
            name = "toy"

            def _sizes(self):
                return FORMS[str(self.ctx.options.get(FORM_OPTION, "default"))]

            def total(self) -> int:
                return len(TOY_KERNELS) * len(self._sizes())

            def cases(self):
                backend = self.ctx.backend
                scratch = self.ctx.scratch
                for tk in TOY_KERNELS:
                    kdef = tk.kernel_def()
                    src = self.source(kdef)
                    if src is None:
                        continue
                    for n in self._sizes():
                        bufs = [backend.alloc(4 * n) for _ in range(3)]
                        pat = pattern("fp32", 0.5, 1.5, 7, PERIOD)
                        fill(bufs[0], pat, n)
                        fill(bufs[1], pat, n)
                        poison(bufs[2], "fp32", n)
                        want = tk.reference(pat)

                        def check(out=bufs[2], n=n, want=want):
                            return check_tiled(read(out, "fp32", n, scratch), want, 0.0, 0.0)

                        yield Case(kernel=kdef, params={"n": n, "form": str(self.ctx.options.get(FORM_OPTION))},
                                   work_items=n // 4, flops=tk.flops_per_elem * n, bytes=tk.bytes_per_elem * n,
                                   args=[*bufs, 3.0],
                                   make_kernel=partial(backend.compile, src[0], src[1], dict(self.constants(kdef))),
                                   check=check, reset=partial(poison, bufs[2], "fp32", n))
        ''',
    "rules.py": '''
        """The toy's rules: its best valid copy is a ceiling; a warning names how many it measured."""
        from ...study.records import Ceiling


        def toy_ceilings(measurements):
            ms = [m for m in measurements if m.suite == "toy" and m.usable]
            if not ms:
                return []
            best = max(ms, key=lambda m: m.gbps)
            return [
                Ceiling("Toy copy bandwidth", "bandwidth", best.gbps, "GB/s", "measured", f"{best.label} (toy rule)")
            ]


        def toy_warnings(measurements):
            n = sum(1 for m in measurements if m.suite == "toy")
            return [f"toy rule saw {n} toy measurements"] if n else []
        ''',
    "table.py": '''
        """The toy's report table."""
        from ...study.table import Table
        from ...text import sig_figs


        def toy_table(run):
            ms = [m for m in run.measurements if m.suite == "toy"]
            if not ms:
                return None
            rows = tuple((m.kernel, str(m.params["n"]), sig_figs(m.gbps)) for m in ms)
            return Table(("Kernel", "n", "GB/s"), rows, "lrr", ("Toy note: copies at each size.",))
        ''',
    "plot.py": '''
        """The toy's figure."""
        from ...figures import new_figure


        def toy_figure(run):
            ms = [m for m in run.measurements if m.suite == "toy" and m.valid]
            if not ms:
                return None
            fig = new_figure((4.0, 3.0))
            ax = fig.subplots()
            ax.plot([m.params["n"] for m in ms], [m.gbps for m in ms], "o-")
            ax.set_title("toy copies")
            return fig
        ''',
    "spec.py": '''
        """The toy's entry in the registry."""
        from ..registry import Section, SuiteFigure, SuiteSpec, optional_tables
        from .kernels import FORM_OPTION
        from .plot import toy_figure
        from .rules import toy_ceilings, toy_warnings
        from .suite import ToySuite
        from .table import toy_table

        SPEC = SuiteSpec(
            name="toy", measure=ToySuite, order=95, budget_s=7.0, summary="toy copies, two sizes when named",
            options=lambda named: {FORM_OPTION: "named" if named else "default"},
            device_facts=lambda info: {"toy_fact": "from the toy"},
            ceilings=toy_ceilings, ceiling_names=lambda: ("Toy copy bandwidth",), warnings=toy_warnings,
            sections=(Section("Toy section", optional_tables(toy_table), order=99,
                              figure=SuiteFigure("toy", toy_figure, "The toy's copies against n.")),))
        ''',
}


def _write_toy(root: Path) -> Path:
    folder = root / "toy"
    folder.mkdir(parents=True)
    for name, text in TOY.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def _cli(extra_path: Path, args: List[str]) -> "subprocess.CompletedProcess[str]":
    code = (
        "import sys, apple_roofline.suites as s; s.__path__.append(sys.argv[1]); "
        "from apple_roofline.cli.app import app; app(sys.argv[2:], prog_name='apple-roofline')"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(extra_path), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "400"},
    )


def test_a_suite_added_as_one_folder_is_run_reported_drawn_and_named_in_the_help(tmp_path: Path) -> None:
    extra = _write_toy(tmp_path / "extra")
    package = Path(suites_package.__file__).parent
    assert not (package / "toy").exists(), "the toy lives outside the repository"

    helped = _cli(extra, ["run", "--help"])
    assert helped.returncode == 0, helped.stderr
    text = " ".join(helped.stdout.replace("│", " ").split())
    assert ", dualissue, toy, hierarchy, matrix (default:" in text, "--suite lists it in run order"
    assert "toy: toy copies, two sizes when named" in text
    assert "dualissue 30, toy 7, hierarchy 90, matrix 120" in text, "--budget gives its default"

    out = tmp_path / "out"
    ran = _cli(
        extra,
        [
            "run",
            "--device",
            "cpu",
            "--suite",
            "toy",
            "--reps",
            "3",
            "--quick",
            "--out",
            str(out),
            "--ceilings",
            "Toy copy bandwidth,FP32 vector",
        ],
    )  # a name its spec says it can set
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ceilings:" not in ran.stderr, "the figures show the chosen ceilings"
    assert 'id="ceiling:measured:bandwidth:Toy copy bandwidth"' in (out / "roofline.svg").read_text(encoding="utf-8")

    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    toy = [m for m in run["measurements"] if m["suite"] == "toy"]
    assert [(m["kernel"], m["params"]["n"], m["params"]["form"]) for m in toy] == [
        ("copy", 4096, "named"),
        ("copy", 65536, "named"),
    ], "the named form's sizes"
    assert all(m["valid"] for m in toy), [m.get("validation") for m in toy]
    assert all(m["bytes"] == 8 * m["params"]["n"] and m["flops"] == 0 for m in toy), "the table's formulas"
    assert run["device"]["toy_fact"] == "from the toy"
    (ceiling,) = [c for c in run["ceilings"] if c["name"] == "Toy copy bandwidth"]
    assert ceiling["value"] == pytest.approx(max(m["gbps"] for m in toy), rel=1e-12), "the toy's rule made it"
    assert "toy rule saw 2 toy measurements" in run["warnings"]
    assert [t["suite"] for t in run["suite_times"]] == ["toy"] and run["suite_times"][0]["budget_s"] == 7.0 / 3

    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Suite: toy" in md and "## Toy section" in md and "Toy note: copies at each size." in md
    assert md.index("## Toy section") > md.index("## Suite: toy")
    assert "Toy copy bandwidth" in md and "toy rule saw 2 toy measurements" in md

    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Toy section</h2>" in page and "The toy&#x27;s copies against n." in page
    section = page.split("<h2>Toy section</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<svg" in section and "<table>" in section, "the figure and the table in the toy's section"
    assert (out / "toy.png").stat().st_size > 0 and (out / "toy.svg").stat().st_size > 0
