"""Which ceilings a roofline figure shows: the default set, all of them, or the ones named.

A run on a GPU with tensor cores holds a dozen measured ceilings and as many theoretical ones; a
figure that shows them all is unreadable. The default keeps what the methodology compares (the M5
GPU roofline analysis: the bandwidth roof, FP32 vector against FP32 scalar ILP, then the other
precisions and the vendor GEMMs): see :func:`default_names`.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple, Union

from .model import RooflineModel
from .records import Ceiling

__all__ = ["CORE_CLASSES", "default_names", "select_ceilings", "parse_ceilings_option"]

#: Compute classes the default figure shows where the roofline has them (besides every GEMM class).
CORE_CLASSES: Tuple[str, ...] = ("FP32 vector", "FP32 scalar ILP", "FP16 vector", "FP16 scalar ILP", "FP64")


def _is_gemm(name: str) -> bool:
    return name.startswith("GEMM ") or name.startswith("CPU GEMM ")


def default_names(model: RooflineModel) -> List[str]:
    """The ceiling names the default figure shows.

    The highest bandwidth ceiling (measured, else theoretical); the compute classes of
    :data:`CORE_CLASSES` and every vendor GEMM class (``"GEMM <dtype>"``, ``"CPU GEMM <dtype>"``)
    that has a measured ceiling — or, when nothing of compute was measured (``--suite stream``),
    that has a theoretical one. A shown name brings both its measured and its theoretical ceiling.
    """
    names: List[str] = []
    source = "measured" if model.has("bandwidth", "measured") else "theoretical"
    if model.has("bandwidth", source):
        names.append(model.bandwidth(source).name)
    source = "measured" if model.has("compute", "measured") else "theoretical"
    for c in model.compute(source):
        if (c.name in CORE_CLASSES or _is_gemm(c.name)) and c.name not in names:
            names.append(c.name)
    return names


def parse_ceilings_option(text: str) -> Union[str, List[str]]:
    """``"default"``, ``"all"`` or a comma-separated list of ceiling names (``--ceilings``)."""
    t = text.strip()
    if t.lower() in ("default", "all"):
        return t.lower()
    names = [n.strip() for n in t.split(",") if n.strip()]
    if not names:
        raise ValueError(f"no ceiling named in {text!r} (valid: default, all, or names separated by commas)")
    return names


def select_ceilings(model: RooflineModel, which: Union[str, Sequence[str]] = "default") -> Tuple[Ceiling, ...]:
    """The ceilings of ``model`` a figure shows: ``"default"`` (:func:`default_names`), ``"all"``,
    or the given names (measured and theoretical ceilings of each).

    Raises:
        ValueError: a name the model has no ceiling of (the message lists the names it has), or an
            unknown keyword.
    """
    if isinstance(which, str):
        if which == "all":
            return model.ceilings
        if which != "default":
            raise ValueError(f"ceilings {which!r} is not a choice (valid: 'default', 'all' or a list of names)")
        wanted = default_names(model)
    else:
        wanted = list(which)
        have = sorted({c.name for c in model.ceilings})
        unknown = [n for n in wanted if n not in have]
        if unknown:
            raise ValueError(f"no ceiling named {', '.join(repr(n) for n in unknown)} (valid: {', '.join(have)})")
    return tuple(c for c in model.ceilings if c.name in wanted)
