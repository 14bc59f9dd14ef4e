"""The ``apple-roofline`` command line: thin Typer commands over the library.

Commands::

    apple-roofline devices [--json]
    apple-roofline run [--device D] [--suite S,...] [--quick] [--reps N] [--array-bytes SIZE] [--ceilings C] [--out DIR]
    apple-roofline plot RUN.json [-o FILE] [--point NAME:FLOPS:BYTES:SECONDS ...] [--ceilings C] [--kernels FILE]
    apple-roofline report RUN.json [--format md|csv|json|html] [--kernels FILE]
    apple-roofline compare RUN.json... [--baseline FILE|median] [-o FILE|compare.html] [--theoretical]
    apple-roofline dispatch [--device D] [--reps N] [--launches N] [--warmup N] [--no-peers] [--out DIR]
    apple-roofline --version

One module per command group (:mod:`.devices`, :mod:`.run`, :mod:`.files` for plot/report, :mod:`.compare`,
:mod:`.dispatch`; :mod:`.kernels` the ``--kernels`` options of plot, report and run), their shared helpers in
:mod:`.common` and the progress display in :mod:`.progress`. Each command parses its options, calls library
functions, prints, and maps errors to exit codes (:mod:`.common`): 0 success; 1 a measurement failed
validation, a device error, a run with no ceilings to plot, a file that could not be written; 2 bad usage (the
library's :class:`~apple_roofline.errors.OptionError` or a bad results file, one with no measurements given to
``plot`` included, one line naming the value and the valid range); 130 interrupted by Ctrl-C, 143 by SIGTERM,
129 by SIGHUP (partial results written, :mod:`.signals`). Every study command takes ``--resume DIR``
(:mod:`.journal`). Progress goes to stderr, summaries and reports to stdout. The library is imported inside
the commands, so ``--help`` and the file commands work without the native extension.
"""

from __future__ import annotations

from .app import app, main
from .common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from .progress import CliProgress

__all__ = ["app", "main", "CliProgress", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED"]
