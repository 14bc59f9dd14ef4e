"""References to compare runs with (``apple-roofline compare RUN --reference NAME``; docs/design/extending.md,
"References"), shipped as package data:

* **published figures** (:class:`PublishedReference`): what articles and public tables state about
  Apple chips (the M5 article's STREAM bandwidths, FP32 and FP16 peaks, fill rate, AMX and Neural
  Engine figures; the MLX article's chip peaks; the A19 article's matrix-unit figures; per-chip GPU
  clock, core count and FLOPS from philipturner/metal-benchmarks) and about the Radeon 780M the M5
  article compares itself with (its Vulkan roofline study's bandwidth and FP32 peaks), each figure
  with its source and the section it stands in; a run of a matching chip shows them beside its own
  figures, labelled published, never measured;
* **measured runs** (:class:`RunReference`): this project's own default runs of GPUs it has run
  on, kept as recorded, so that ``compare out/ --reference h100`` checks a GPU against a known-good
  one of its kind with the node run's outlier rule (:mod:`.health`).

:func:`reference_names` lists them, :func:`load_reference` loads one, :func:`reference_sections`
gives its sections of a comparison and :func:`published_lines` the published ceilings its figures draw.
"""

from .catalog import REFERENCE_KINDS, Reference, load_reference, reference_names, references_table
from .health import HealthFlag, health_flags, health_table
from .published import (
    BASES,
    ENGINE_BACKENDS,
    PublishedFigure,
    PublishedReference,
    Source,
    chip_key,
    chip_names,
    is_chip_of,
)
from .published_lines import published_lines
from .published_table import published_table, published_text, run_cell
from .runs import RunReference
from .sections import reference_sections

__all__ = [
    "REFERENCE_KINDS",
    "Reference",
    "load_reference",
    "reference_names",
    "references_table",
    "HealthFlag",
    "health_flags",
    "health_table",
    "BASES",
    "ENGINE_BACKENDS",
    "PublishedFigure",
    "PublishedReference",
    "Source",
    "chip_names",
    "chip_key",
    "is_chip_of",
    "published_lines",
    "published_table",
    "published_text",
    "run_cell",
    "RunReference",
    "reference_sections",
]
