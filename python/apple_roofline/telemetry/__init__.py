"""Clocks and power sampled in the background during a run (docs/design/power.md, "Clocks and power"):
the :class:`Sampler` interface and window summary, one module per source (NVML, RAPL, IOReport,
powermetrics), and :func:`sampler_for` choosing the source of a device."""

from .base import NullSampler, Sample, Sampler, clock
from .choose import sampler_for
from .ioreport import IOReportSampler
from .nvml import NvmlSampler
from .powermetrics import PowermetricsSampler
from .rapl import RaplSampler
from .window import PARAMS, POWER, Summary, summarize

__all__ = [
    "Sample",
    "Sampler",
    "NullSampler",
    "NvmlSampler",
    "RaplSampler",
    "IOReportSampler",
    "PowermetricsSampler",
    "Summary",
    "PARAMS",
    "POWER",
    "clock",
    "sampler_for",
    "summarize",
]
