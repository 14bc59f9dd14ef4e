"""This project's own runs as references: a default run of a GPU it has run on, kept as recorded
(tool, git revision, host, device, command: the results file's own provenance), so that another
GPU of the same kind can be checked against it (docs/design/extending.md, "References")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..roofline.model.run import Run
from ..text import date_of

__all__ = ["RunReference"]


@dataclass(frozen=True)
class RunReference:
    """A measured run as a reference: ``name`` (what ``--reference`` takes), ``description``,
    ``provenance`` (how and when it was recorded, in words) and the ``run`` itself."""

    KIND: ClassVar[str] = "run"

    name: str
    description: str
    provenance: str
    run: Run

    def matches(self, run: Run) -> bool:
        """Whether ``run`` is of the reference's kind of device: the same backend and device name
        (``cuda``, ``"NVIDIA H100 80GB HBM3"``). Only such a run is held to the reference's
        ceilings (:mod:`.health`)."""
        return run.backend == self.run.backend and run.device_name == self.run.device_name

    @property
    def device(self) -> str:
        """``"NVIDIA H100 80GB HBM3 (cuda)"``."""
        return f"{self.run.device_name} ({self.run.backend})"

    def recorded(self) -> str:
        """The run's own provenance in one line: date, tool and revision, command."""
        r = self.run
        rev = f" ({r.tool.git_revision})" if r.tool.git_revision else ""
        return f"run of {date_of(r.created)} by {r.tool.name} {r.tool.version}{rev}: `{' '.join(r.command)}`"
