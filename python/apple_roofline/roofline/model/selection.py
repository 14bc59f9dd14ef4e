"""Which ceilings a roofline figure shows: the default set, all of them, or the ones named.

A run on a GPU with tensor cores holds a dozen measured ceilings and as many theoretical ones; a
figure that shows them all is unreadable. The default keeps what the methodology compares (the M5
GPU roofline analysis: the bandwidth roof, FP32 vector against FP32 scalar ILP, then the other
precisions and the vendor GEMMs): see :func:`default_names`.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple, Union

from ...errors import OptionError
from ...study.records import Ceiling
from .model import RooflineModel

__all__ = [
    "CORE_CLASSES",
    "FP16_CLASSES",
    "MATRIX_PREFIX",
    "GEMM_CORE",
    "GEMM_HALF",
    "default_gemm_names",
    "default_names",
    "select_ceilings",
    "parse_ceilings_option",
]

#: Compute classes the default figure shows where the roofline has them: every one of
#: :data:`CORE_CLASSES`, the best one of :data:`FP16_CLASSES`, and the GEMM classes of
#: :func:`default_gemm_names`.
CORE_CLASSES: Tuple[str, ...] = ("FP32 vector", "FP32 scalar ILP", "FP64")
#: The FP16 compute classes, of which the default figure shows the highest one.
FP16_CLASSES: Tuple[str, ...] = ("FP16 vector", "FP16 scalar ILP")
#: GEMM precisions the default figure always shows where measured.
GEMM_CORE: Tuple[str, ...] = ("FP32", "FP64")
#: The matrix-unit classes ("Matrix FP16→FP32 (wgmma)", "Matrix INT8→INT32 (mma.sync)" ...: precision and
#: instruction), of which the default figure shows the highest one.
MATRIX_PREFIX = "Matrix "
#: Half-precision GEMM dtypes, of which the default figure shows the highest one.
GEMM_HALF: Tuple[str, ...] = ("FP16", "BF16")


def _gemm_dtype(name: str) -> Optional[str]:
    """``"FP16"`` of ``"GEMM FP16"`` or ``"CPU GEMM FP16"``; None for a name that is not a GEMM class."""
    for prefix in ("GEMM ", "CPU GEMM "):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return None


def _best(ceilings: Sequence[Ceiling], keep: Callable[[str], bool]) -> List[str]:
    """The name of the highest of ``ceilings`` whose name ``keep`` accepts (``ceilings`` are highest
    first), as a list of at most one."""
    return next(([c.name] for c in ceilings if keep(c.name)), [])


def default_gemm_names(compute: Sequence[Ceiling]) -> List[str]:
    """The GEMM classes of ``compute`` (compute ceilings of one source, highest first) the default
    figure shows: FP32 and FP64 (:data:`GEMM_CORE`), the highest half-precision one
    (:data:`GEMM_HALF`: FP16 or BF16), and the highest of the other precisions (the top tensor
    precision: INT8, TF32, FP8 ...), each of the vendor GEMM (``"GEMM <dtype>"``) and of the CPU
    GEMM (``"CPU GEMM <dtype>"``) where the run has both."""
    names: List[str] = []
    for prefix in ("GEMM ", "CPU GEMM "):
        own = [c for c in compute if c.name.startswith(prefix)]
        names += [c.name for c in own if _gemm_dtype(c.name) in GEMM_CORE]
        names += _best(own, lambda n: _gemm_dtype(n) in GEMM_HALF)
        names += _best(own, lambda n: _gemm_dtype(n) not in GEMM_CORE + GEMM_HALF)
    return names


def default_names(model: RooflineModel) -> List[str]:
    """The ceiling names the default figure shows, highest first within each kind.

    The default bandwidth ceiling (DRAM's: measured, else theoretical) and every measured cache level's
    (:attr:`~.records.Ceiling.is_level`); of the compute ceilings (measured, or, when nothing of compute was
    measured (``--suite stream``), theoretical): FP32 vector, FP32 scalar ILP and FP64 (:data:`CORE_CLASSES`),
    the highest FP16 class (:data:`FP16_CLASSES`) and the GEMM classes of :func:`default_gemm_names` (FP32,
    FP64, the best half precision and the top other precision), and the highest matrix-unit class where the
    run measured the matrix suite. A shown name brings both its measured and its theoretical ceiling, so a
    theoretical ceiling is shown exactly when its measured class is. On an H100 that is 9 of the 12 classes
    ``"all"`` shows; on a CPU, every class but the lower FP16 one.
    """
    names: List[str] = []
    source = "measured" if model.has("bandwidth", "measured") else "theoretical"
    if model.has("bandwidth", source):
        names.append(model.bandwidth(source).name)
    # the measured cache levels (the cache-aware roofline, docs/design/hierarchy.md, "The memory hierarchy")
    names += [c.name for c in model.ceilings if c.is_level and c.source == "measured" and c.name not in names]
    source = "measured" if model.has("compute", "measured") else "theoretical"
    compute = model.compute(source)
    wanted = set(CORE_CLASSES) | set(_best(compute, lambda n: n in FP16_CLASSES)) | set(default_gemm_names(compute))
    wanted |= set(_best(compute, lambda n: n.startswith(MATRIX_PREFIX)))
    names += [c.name for c in compute if c.name in wanted and c.name not in names]
    return names


def parse_ceilings_option(text: str, valid: Sequence[str]) -> Union[str, List[str]]:
    """``--ceilings`` of ``run`` and ``plot``, checked alike before anything is measured or drawn:
    ``"default"``, ``"all"`` or a comma-separated list of names, each one of ``valid`` (``plot``:
    the names the run holds; ``run``, before measuring: every name a run can hold,
    :func:`~.ceiling_names.known_ceiling_names`).

    Raises:
        OptionError: (option ``ceilings``) a list that names nothing, or a name not in ``valid``;
            one line naming them and listing the valid names.
    """
    t = text.strip()
    if t.lower() in ("default", "all"):
        return t.lower()
    names = [n.strip() for n in t.split(",") if n.strip()]
    choices = f"default, all, or names separated by commas of: {', '.join(valid)}"
    if not names:
        raise OptionError("ceilings", text, choices, problem="names no ceiling")
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise OptionError(
            "ceilings",
            unknown,
            choices,
            shown=", ".join(repr(n) for n in unknown),
            problem="is not a ceiling name" if len(unknown) == 1 else "are not ceiling names",
        )
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
