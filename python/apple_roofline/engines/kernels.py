"""The engines study's kernel table: the matmul models as data, their FLOPs and bytes, the sweep.

Each model computes ``y = x · W`` with ``x`` of shape (B, K) (FP16 activations, B the batch) and a
constant weight ``W`` of shape (K, M): square N × N weights (K = M = N) or the M5 article's FFN shape
(2048 × 8192). Precisions: ``fp16`` (FP16 weights and activations) and ``w8a16`` (INT8 weights by
coremltools' per-channel linear quantization, an FP16 scale and an INT8 zero point per output
channel; FP16 activations). Counting (docs/design/measurement.md, "Counting FLOPs and bytes"):

* FLOPs = 2·B·K·M per prediction (one multiply and one add per term of every dot product);
* bytes = weights + inputs + outputs, each read or written once: weights 2·K·M (fp16) or
  K·M + 3·M (w8a16: the INT8 data, a 2-byte scale and a 1-byte zero point per column), inputs
  2·B·K, outputs 2·B·M.

Compute units are coremltools' names of ``MLModelConfiguration.computeUnits``: ``CPU_ONLY``,
``CPU_AND_GPU``, ``CPU_AND_NE`` (CPU and Neural Engine; it excludes the GPU but does not force the
Neural Engine) and ``ALL`` (docs/design/studies.md, "The engines study").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Sequence, Tuple, Union

from ..errors import OptionError, check_int
from ..suites.gemm.precisions import gemm_flops

__all__ = [
    "UNITS",
    "PRECISIONS",
    "FFN_SHAPE",
    "DEFAULT_SIZES",
    "DEFAULT_BATCHES",
    "QUICK_SIZES",
    "QUICK_BATCHES",
    "MAX_DIM",
    "MAX_BATCH",
    "DECODE_BATCH",
    "PREFILL_BATCH",
    "Shape",
    "Point",
    "parse_shape",
    "parse_shapes",
    "check_batches",
    "parse_units",
    "parse_precisions",
    "matmul_flops",
    "weight_bytes",
    "matmul_bytes",
    "plan_points",
    "phase",
]

#: Compute-unit settings, in the order the article's tables use.
UNITS: Tuple[str, ...] = ("CPU_ONLY", "CPU_AND_GPU", "CPU_AND_NE", "ALL")
#: Precisions: FP16 weights and activations; INT8 weights with FP16 activations.
PRECISIONS: Tuple[str, ...] = ("fp16", "w8a16")
#: The article's FFN projection: 2048 inputs, 8192 outputs.
FFN_SHAPE: Tuple[int, int] = (2048, 8192)
#: The largest K or M.
MAX_DIM = 16384
#: The largest batch.
MAX_BATCH = 4096
#: The article's decode batch (one token) and the batch from which it calls a matmul prefill.
DECODE_BATCH = 1
PREFILL_BATCH = 64


@dataclass(frozen=True, order=True)
class Shape:
    """A weight of K × M (inputs × outputs); ``name`` is ``"N"`` for a square one, else ``"KxM"``."""

    k: int
    m: int

    @property
    def name(self) -> str:
        """``"2048"`` (square) or ``"2048x8192"``."""
        return str(self.k) if self.k == self.m else f"{self.k}x{self.m}"

    @property
    def square(self) -> bool:
        """Whether K = M."""
        return self.k == self.m


#: The default sweep: N = 256 … 4096 and the FFN shape.
DEFAULT_SIZES: Tuple[Shape, ...] = (
    Shape(256, 256),
    Shape(512, 512),
    Shape(1024, 1024),
    Shape(2048, 2048),
    Shape(4096, 4096),
    Shape(*FFN_SHAPE),
)
#: The article's batches: 1 (decode) … 256 (prefill).
DEFAULT_BATCHES: Tuple[int, ...] = (1, 4, 16, 64, 256)
#: ``--quick``: two sizes, decode and prefill.
QUICK_SIZES: Tuple[Shape, ...] = (Shape(256, 256), Shape(1024, 1024))
QUICK_BATCHES: Tuple[int, ...] = (1, 64)

_SHAPE = re.compile(r"^\s*([0-9]+)\s*(?:[xX]\s*([0-9]+))?\s*$")


def parse_shape(text: Union[str, int]) -> Shape:
    """``"2048"`` or ``2048`` -> 2048 × 2048; ``"2048x8192"`` -> K = 2048, M = 8192; ``"ffn"`` the FFN shape.

    Raises:
        OptionError: (option ``sizes``) not N, KxM or ffn, or a dimension outside 1 to :data:`MAX_DIM`.
    """
    if isinstance(text, str) and text.strip().lower() == "ffn":
        return Shape(*FFN_SHAPE)
    m = _SHAPE.match(str(text))
    valid = f"N or KxM with each 1 to {MAX_DIM}, or ffn ({FFN_SHAPE[0]}x{FFN_SHAPE[1]})"
    if not m:
        raise OptionError("sizes", text, valid, problem="is not a weight size")
    k = int(m.group(1))
    n = int(m.group(2)) if m.group(2) else k
    if not (1 <= k <= MAX_DIM and 1 <= n <= MAX_DIM):
        raise OptionError("sizes", text, valid)
    return Shape(k, n)


def parse_shapes(values: Union[str, Sequence[Union[str, int]]]) -> Tuple[Shape, ...]:
    """A comma-separated list (or a sequence) of :func:`parse_shape` values, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``sizes``) a bad value or an empty list.
    """
    items = [s for s in (values.split(",") if isinstance(values, str) else list(values)) if str(s).strip()]
    if not items:
        raise OptionError("sizes", values, "N or KxM values, or ffn", problem="names no size")
    return tuple(sorted({parse_shape(s) for s in items}))


def check_batches(values: Sequence[object]) -> Tuple[int, ...]:
    """Batches, each 1 to :data:`MAX_BATCH`, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``batches``) a value that is not an integer in range, or none.
    """
    if not values:
        raise OptionError("batches", "", f"integers 1 to {MAX_BATCH}", problem="names no batch")
    return tuple(sorted({check_int(v, "batches", 1, MAX_BATCH) for v in values}))


def _choices(values: Union[str, Sequence[str]], option: str, valid: Tuple[str, ...], upper: bool) -> Tuple[str, ...]:
    items = values.split(",") if isinstance(values, str) else list(values)
    names = [(s.strip().upper() if upper else s.strip().lower()) for s in items if s.strip()]
    if not names:
        raise OptionError(option, values, ", ".join(valid), problem="names nothing")
    for n in names:
        if n not in valid:
            raise OptionError(option, n, ", ".join(valid), problem="is not a choice", shown=repr(n))
    return tuple(v for v in valid if v in names)


def parse_units(values: Union[str, Sequence[str]]) -> Tuple[str, ...]:
    """Compute units from :data:`UNITS` (any case), in that order.

    Raises:
        OptionError: (option ``units``) an unknown name or an empty list.
    """
    return _choices(values, "units", UNITS, True)


def parse_precisions(values: Union[str, Sequence[str]]) -> Tuple[str, ...]:
    """Precisions from :data:`PRECISIONS`, in that order.

    Raises:
        OptionError: (option ``precisions``) an unknown name or an empty list.
    """
    return _choices(values, "precisions", PRECISIONS, False)


def matmul_flops(batch: int, k: int, m: int) -> int:
    """2·B·K·M: FLOPs of one prediction (the gemm suite's count, M = B, N = M, K = K)."""
    return gemm_flops(batch, m, k)


def weight_bytes(k: int, m: int, precision: str) -> int:
    """Bytes of the weight as the model stores it: 2·K·M (fp16) or K·M + 3·M (w8a16: INT8 data, an
    FP16 scale and an INT8 zero point per output column). Raises KeyError for another precision."""
    return {"fp16": 2 * k * m, "w8a16": k * m + 3 * m}[precision]


def matmul_bytes(batch: int, k: int, m: int, precision: str) -> int:
    """Compulsory bytes of one prediction: the weight (:func:`weight_bytes`) + 2·B·K input bytes +
    2·B·M output bytes (FP16 activations)."""
    return weight_bytes(k, m, precision) + 2 * batch * k + 2 * batch * m


def phase(batch: int) -> str:
    """The article's name of a batch: ``"decode"`` (1), ``"prefill"`` (>= 64), else ``""``."""
    return "decode" if batch == DECODE_BATCH else "prefill" if batch >= PREFILL_BATCH else ""


@dataclass(frozen=True)
class Point:
    """One point of the sweep: a model (shape, batch, precision) under a compute-units setting."""

    units: str
    precision: str
    shape: Shape
    batch: int

    @property
    def flops(self) -> int:
        """:func:`matmul_flops` of the point."""
        return matmul_flops(self.batch, self.shape.k, self.shape.m)

    @property
    def bytes(self) -> int:
        """:func:`matmul_bytes` of the point."""
        return matmul_bytes(self.batch, self.shape.k, self.shape.m, self.precision)

    @property
    def label(self) -> str:
        """``"ALL fp16 2048 B=64"``."""
        return f"{self.units} {self.precision} {self.shape.name} B={self.batch}"


def plan_points(
    units: Sequence[str], precisions: Sequence[str], shapes: Sequence[Shape], batches: Sequence[int]
) -> List[Point]:
    """Every point of the sweep, model by model (precision, shape, batch), each under every compute
    unit, so that a model is loaded once per setting in turn."""
    return [Point(u, p, s, b) for p in precisions for s in shapes for b in batches for u in units]
