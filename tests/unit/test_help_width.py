"""Every command's ``--help`` at 80 columns (``COLUMNS=80``) shows its text whole (issue 45: ``run
--help`` cut the suite list to "stream,sweep,peak,gemm,idiv…", Rich's ellipsis for a word wider than
its column): every word of the command's help and of each option's, and each option's metavar, is in
the page as written, and no line passes 80 columns."""

from __future__ import annotations

import re
from typing import List, Tuple

import pytest
import typer
from typer.testing import CliRunner

from apple_roofline.cli import app

COMMAND = typer.main.get_command(app)
COMMANDS: List[Tuple[str, ...]] = [(), *((name,) for name in COMMAND.commands)]  # type: ignore[attr-defined]


def _texts(args: Tuple[str, ...]) -> Tuple[List[str], List[str]]:
    """The help texts (the command's and its parameters') and the metavars of the command ``args``."""
    cmd = COMMAND if not args else COMMAND.commands[args[0]]  # type: ignore[attr-defined]
    texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
    metavars = [p.metavar for p in cmd.params if p.metavar]
    return texts, metavars


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "apple-roofline")
def test_help_at_80_columns_is_not_cut(args: Tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    shown = " ".join(re.sub(r"[│╭╮╰╯─]", " ", ln) for ln in lines).split()
    texts, metavars = _texts(args)
    words = {w for text in texts for w in text.replace("\\[", "[").split()}  # as escaped for Rich
    cut = sorted(w for w in words if w not in shown)
    assert not cut, cut
    assert not [m for m in metavars if m not in shown], metavars
