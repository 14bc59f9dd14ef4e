"""The ``apple-roofline`` Typer application: the root callback (``--version``) and every command,
each defined in the module of its group."""

from __future__ import annotations

from typing import Annotated

import typer

from .._version import __version__
from . import calls as calls_cmd
from . import compare as compare_cmd
from . import devices as devices_cmd
from . import dispatch as dispatch_cmd
from . import engines as engines_cmd
from . import files as files_cmd
from . import graphics as graphics_cmd
from . import run as run_cmd
from . import tune as tune_cmd
from .common import EXIT_FAILED, EXIT_OK
from .readable import ReadableCommand, ReadableGroup
from .signals import ending_now, interrupted_code, leave, received, signals_as_interrupts
from .streams import guarded_streams

__all__ = ["app", "main"]

app = typer.Typer(
    name="apple-roofline",
    help="Measure the roofline of this machine: STREAM bandwidth, FMA peaks, arithmetic-intensity sweeps, GEMM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=ReadableGroup,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"apple-roofline {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the package version and exit."
        ),
    ] = False,
) -> None:
    """Measure the roofline of this machine: STREAM bandwidth, FMA peaks, arithmetic-intensity sweeps, GEMM."""


app.command("devices", cls=ReadableCommand)(devices_cmd.devices)
app.command("run", cls=ReadableCommand)(run_cmd.run)
app.command("plot", cls=ReadableCommand)(files_cmd.plot)
app.command("report", cls=ReadableCommand)(files_cmd.report)
app.command("compare", cls=ReadableCommand)(compare_cmd.compare)
app.command("dispatch", cls=ReadableCommand)(dispatch_cmd.dispatch)
app.command("graphics", cls=ReadableCommand)(graphics_cmd.graphics)
app.command("calls", cls=ReadableCommand)(calls_cmd.calls)
app.command("engines", cls=ReadableCommand)(engines_cmd.engines)
app.command("tune", cls=ReadableCommand)(tune_cmd.tune)


def main() -> None:
    """Entry point of the ``apple-roofline`` script. SIGTERM and SIGHUP end a command as Ctrl-C does
    (:mod:`.signals`); a command a signal ended exits 128 + its number, whatever it was doing. A
    command that was interrupted or whose device stopped responding, its partial study written,
    ends the process at once (:func:`.signals.leave`): the interpreter's exit could wait on the device.
    A stdout or stderr that is closed or full stops the printing, not the command (:mod:`.streams`)."""
    with signals_as_interrupts(), guarded_streams():
        try:
            app()
        except SystemExit as exc:
            code = interrupted_code() if received() is not None else exc.code
            if ending_now():
                leave(code if isinstance(code, int) else EXIT_FAILED)
            if received() is not None:
                raise SystemExit(code) from None
            raise
