"""Text the CLI prints through Rich is text, never markup (issue 45): a package's hint, a device's
reason, a help text and a progress line with square brackets reach the terminal whole (Rich read
``[graphics]`` as a style tag and dropped it, so ``devices`` without wgpu hinted ``pip install
'apple_roofline'``)."""

from __future__ import annotations

from typing import Annotated, List

import pytest
import typer
from typer.testing import CliRunner

import apple_roofline.devices as devices_module
import apple_roofline.graphics.wgpu_device as wgpu_device
from apple_roofline.cli import app
from apple_roofline.cli.devices import devices_table
from apple_roofline.cli.progress import CliProgress
from apple_roofline.cli.readable import ReadableCommand, ReadableGroup
from apple_roofline.devices import DeviceStatus
from apple_roofline.graphics.wgpu_device import WGPU_EXTRA, WgpuUnavailable

HINT = "pip install 'apple_roofline[graphics]'"
#: Texts Rich's markup would change: a style tag, a closing tag, an escaped bracket, a link tag.
BRACKETED = [HINT, "[bold]not bold[/bold]", "a [/] b", r"C:\path\[x]", "[link=https://x]y[/link]"]


def test_devices_without_wgpu_shows_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """The case as written: ``devices`` where wgpu is not installed."""
    monkeypatch.setattr(devices_module, "list_devices", lambda: [DeviceStatus("cpu", True, 1, "", "Test CPU", {})])

    def no_wgpu() -> List[object]:
        raise WgpuUnavailable(f"the graphics suites need wgpu: {WGPU_EXTRA} (No module named 'wgpu')")

    monkeypatch.setattr(wgpu_device, "adapters", no_wgpu)
    result = CliRunner().invoke(app, ["devices"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert HINT in result.output
    assert WGPU_EXTRA.startswith(HINT)


@pytest.mark.parametrize("text", BRACKETED)
def test_a_devices_cell_reaches_the_terminal_whole(text: str) -> None:
    table = devices_table([["wgpu", "no", "0", "-", "-", text]], 300)
    assert text in table


@pytest.mark.parametrize("text", BRACKETED)
def test_a_help_text_reaches_the_terminal_whole(text: str) -> None:
    """An option's help and a command's (ReadableCommand, ReadableGroup: every command of the app)."""
    demo = typer.Typer(cls=ReadableGroup, add_completion=False)

    def cmd(flag: bool = False) -> None:
        pass

    cmd.__annotations__ = {"flag": Annotated[bool, typer.Option("--flag", help=f"Option: {text}.")], "return": None}
    cmd.__doc__ = f"Command: {text}."
    demo.command("cmd", cls=ReadableCommand)(cmd)
    demo.command("other", cls=ReadableCommand)(lambda: None)
    result = CliRunner().invoke(demo, ["cmd", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert f"Option: {text}." in result.output and f"Command: {text}." in result.output
    again = CliRunner().invoke(demo, ["cmd", "--help"], env={"COLUMNS": "300"})  # escaped once, not twice
    assert f"Option: {text}." in again.output


@pytest.mark.parametrize("text", BRACKETED)
def test_a_progress_line_reaches_the_terminal_whole(text: str) -> None:
    p = CliProgress(rich=True)
    p.plan(["stream"], [30.0])
    p.start(f"s{text}", 2)
    p.advance(f"stream/copy/fp32: {text}")
    task = p._bar.tasks[-1]
    shown = [str(column.render(task)) for column in p._bar.columns if hasattr(column, "text_format")]
    p.close()
    assert f"stream/copy/fp32: {text}" in shown and f"s{text}".ljust(9) in shown
