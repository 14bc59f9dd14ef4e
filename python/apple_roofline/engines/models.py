"""Building the engines study's matmul models with coremltools, once, into a cache directory.

A model is an ML program (``minimum_deployment_target`` macOS 13, FP16 compute precision) made with
coremltools' MIL builder: one ``matmul`` of the FP16 input ``x`` (B × K) by a constant weight W
(K × M) into the output ``y`` (B × M). W is uniform in [-1, 1) from a seed derived from (K, M), so the
weights of a shape are the same at every batch and precision. ``w8a16`` models are the FP16 model
passed through ``coremltools.optimize.coreml.linear_quantize_weights`` (``linear_symmetric``, int8,
per output channel): the model then holds INT8 data, a scale and a zero point per channel
(``constexpr_affine_dequantize``), and the reference weight for validation is the dequantized one,
(q − zero point)·scale rounded to FP16, found from the model's own weights
(``get_weights_metadata``).

Cache: ``<cache>/<key>/`` with ``model.mlpackage`` (built here, on any OS), ``model.mlmodelc``
(compiled by Core ML on macOS) and ``reference.npy`` (the weight validation compares against,
FP16), where ``key`` hashes the model's parameters and the coremltools and NumPy versions. A
folder is complete once its ``model.json`` exists (written last, atomically); anything else is
rebuilt. coremltools is the optional extra ``apple_roofline[coreml]``
(docs/design/studies.md, "The engines study").
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from ..study.files import read_capped, write_text_atomic
from .kernels import Shape, weight_bytes

__all__ = [
    "COREML_EXTRA",
    "CoremltoolsMissing",
    "ModelBuildError",
    "BuiltModel",
    "import_coremltools",
    "default_cache_dir",
    "model_key",
    "weight_seed",
    "fp16_weights",
    "build_model",
    "load_built",
    "INPUT_NAME",
    "OUTPUT_NAME",
]

#: The most bytes a cached model's ``model.json`` may hold (a few hundred are written): a larger or
#: unreadable one is not a complete entry, and the model is built again.
META_CAP = 64 * 1024

#: How to install coremltools.
COREML_EXTRA = "pip install 'apple_roofline[coreml]' (coremltools)"
#: The models' feature names.
INPUT_NAME = "x"
OUTPUT_NAME = "y"
#: Layout version of a cache folder (part of the key).
_CACHE_LAYOUT = 1


class CoremltoolsMissing(RuntimeError):
    """coremltools is not installed; the message names the extra to install."""


class ModelBuildError(RuntimeError):
    """coremltools could not build or quantize a model; the message carries coremltools' own."""


def import_coremltools() -> Any:
    """The ``coremltools`` module, or :class:`CoremltoolsMissing` naming the extra."""
    try:
        import coremltools
    except ImportError as exc:
        raise CoremltoolsMissing(f"coremltools is not installed ({exc}): {COREML_EXTRA}") from None
    return coremltools


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/apple_roofline/coreml`` (``~/.cache/...`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "apple_roofline" / "coreml"


def weight_seed(shape: Shape) -> int:
    """The seed of W for a shape: the same at every batch and precision."""
    return (shape.k * 1_000_003 + shape.m) % (2**31)


def fp16_weights(shape: Shape) -> np.ndarray:
    """W (K × M), uniform in [-1, 1) rounded to FP16, from :func:`weight_seed`."""
    rng = np.random.default_rng(weight_seed(shape))
    return rng.uniform(-1.0, 1.0, (shape.k, shape.m)).astype(np.float16)


def model_key(shape: Shape, batch: int, precision: str, coremltools_version: str) -> str:
    """The cache folder name of a model: its parameters, the coremltools and NumPy versions (the
    weights come from NumPy's generator) and the cache layout, hashed (SHA-256, 16 hex digits),
    after a readable prefix (``fp16-2048x2048-b64-<hash>``)."""
    params = {
        "k": shape.k,
        "m": shape.m,
        "batch": batch,
        "precision": precision,
        "seed": weight_seed(shape),
        "coremltools": coremltools_version,
        "numpy": np.__version__,
        "layout": _CACHE_LAYOUT,
    }
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]
    return f"{precision}-{shape.k}x{shape.m}-b{batch}-{digest}"


@dataclass(frozen=True)
class BuiltModel:
    """A model in the cache.

    Attributes:
        key: its folder name (:func:`model_key`).
        folder: the folder.
        shape, batch, precision: what it computes.
        weight_bytes_in_model: bytes of the weight arrays the model holds (coremltools'
            ``get_weights_metadata``), to check against :func:`~.kernels.weight_bytes`.
        build_s: seconds it took to build (0 when it came from the cache).
        cached: whether it came from the cache.
        coremltools: the coremltools version that built it.
    """

    key: str
    folder: Path
    shape: Shape
    batch: int
    precision: str
    weight_bytes_in_model: int
    build_s: float
    cached: bool
    coremltools: str

    @property
    def package(self) -> Path:
        """``model.mlpackage``."""
        return self.folder / "model.mlpackage"

    @property
    def compiled(self) -> Path:
        """``model.mlmodelc`` (present once compiled on macOS)."""
        return self.folder / "model.mlmodelc"

    @property
    def reference_path(self) -> Path:
        """``reference.npy``: the weight outputs are validated against."""
        return self.folder / "reference.npy"

    def reference(self) -> np.ndarray:
        """The reference weight (K × M, FP16)."""
        return np.asarray(np.load(self.reference_path))

    @property
    def accounting_ok(self) -> bool:
        """Whether the model's weight bytes are what the kernel table counts."""
        return self.weight_bytes_in_model == weight_bytes(self.shape.k, self.shape.m, self.precision)


def _program(ct: Any, w: np.ndarray, batch: int) -> Any:
    from coremltools.converters.mil import Builder as mb
    from coremltools.converters.mil.mil import types

    def matmul(x: Any) -> Any:
        return mb.matmul(x=x, y=w, name=OUTPUT_NAME)

    build: Any = mb.program(
        input_specs=[mb.TensorSpec(shape=(batch, w.shape[0]), dtype=types.fp16)], opset_version=ct.target.macOS13
    )
    return build(matmul)


def _quantized_reference(model: Any, w: np.ndarray) -> Tuple[np.ndarray, int]:
    """The dequantized weight of a linear-quantized model and the bytes of its weight arrays.

    The quantized data is the model's int8 array of W's shape; the scale and zero point are its
    per-channel arrays (a float and an int8 array of M or K values). Which axis they apply along is
    the one whose dequantized weight lies within half a step (scale/2, plus FP16 rounding) of W
    everywhere; none is a :class:`ModelBuildError`.
    """
    from coremltools.optimize.coreml import get_weights_metadata

    arrays = [np.asarray(v.val) for v in get_weights_metadata(model, weight_threshold=0).values()]
    q = [a for a in arrays if a.dtype == np.int8 and a.shape == w.shape]
    if len(q) != 1:
        raise ModelBuildError(f"the quantized model holds {len(q)} int8 arrays of shape {w.shape}, expected 1")
    scales = [a for a in arrays if a.dtype.kind == "f" and a.ndim <= 2 and a.size in (w.shape[0], w.shape[1])]
    zeros = [a for a in arrays if a.dtype == np.int8 and a.size in (w.shape[0], w.shape[1]) and a.shape != w.shape]
    if len(scales) != 1 or len(zeros) > 1:
        raise ModelBuildError(
            f"the quantized model holds {len(scales)} scale and {len(zeros)} zero-point arrays, "
            "expected one of each per channel"
        )
    scale = scales[0].astype(np.float64).ravel()
    zero = zeros[0].astype(np.float64).ravel() if zeros else np.zeros_like(scale)
    w64 = w.astype(np.float64)
    for axis in (1, 0):
        if scale.size != w.shape[axis]:
            continue
        shape = (1, -1) if axis == 1 else (-1, 1)
        s = scale.reshape(shape)
        deq = (q[0].astype(np.float64) - zero.reshape(shape)) * s
        if np.all(np.abs(deq - w64) <= s / 2 * (1 + 2**-10) + np.abs(w64) * 2**-11):
            nbytes = int(sum(a.nbytes for a in arrays))
            return deq.astype(np.float16), nbytes
    raise ModelBuildError(
        "the quantized weights do not dequantize to within half a step of the FP16 weights along either axis"
    )


def _build(ct: Any, shape: Shape, batch: int, precision: str, folder: Path) -> Tuple[np.ndarray, int]:
    w = fp16_weights(shape)
    model = ct.convert(
        _program(ct, w, batch),
        convert_to="mlprogram",
        minimum_deployment_target=ct.target.macOS13,
        compute_precision=ct.precision.FLOAT16,
    )
    if precision == "w8a16":
        from coremltools.optimize.coreml import OpLinearQuantizerConfig, OptimizationConfig, linear_quantize_weights

        config = OptimizationConfig(
            global_config=OpLinearQuantizerConfig(mode="linear_symmetric", dtype="int8", weight_threshold=0)
        )
        model = linear_quantize_weights(model, config=config)
        reference, nbytes = _quantized_reference(model, w)
    else:
        reference, nbytes = w, int(w.nbytes)
    spec = model.get_spec()
    names = ([f.name for f in spec.description.input], [f.name for f in spec.description.output])
    if names != ([INPUT_NAME], [OUTPUT_NAME]):
        raise ModelBuildError(f"the model's features are {names}, expected ([{INPUT_NAME!r}], [{OUTPUT_NAME!r}])")
    model.save(str(folder / "model.mlpackage"))
    np.save(folder / "reference.npy", reference)
    return reference, nbytes


def load_built(folder: Path) -> Optional[BuiltModel]:
    """The model cached in ``folder``, or None when the folder is not a complete one."""
    try:
        meta = json.loads(read_capped(folder / "model.json", META_CAP, "model cache entry").decode("utf-8"))
        model = BuiltModel(
            key=folder.name,
            folder=folder,
            shape=Shape(int(meta["k"]), int(meta["m"])),
            batch=int(meta["batch"]),
            precision=str(meta["precision"]),
            weight_bytes_in_model=int(meta["weight_bytes_in_model"]),
            build_s=0.0,
            cached=True,
            coremltools=str(meta["coremltools"]),
        )
    except (OSError, ValueError, KeyError, TypeError):  # read_capped's ResultsError is a ValueError: built again
        return None
    if not (model.package.is_dir() and model.reference_path.is_file()):
        return None
    return model


def build_model(shape: Shape, batch: int, precision: str, cache_dir: Path) -> BuiltModel:
    """The model (shape, batch, precision) from ``cache_dir``, built there first when absent.

    Raises:
        CoremltoolsMissing: coremltools is not installed (the message names the extra).
        ModelBuildError: coremltools failed (its message), or the built model is not as expected.
        OSError: the cache cannot be written.
    """
    ct = import_coremltools()
    key = model_key(shape, batch, precision, ct.__version__)
    folder = Path(cache_dir) / key
    cached = load_built(folder)
    if cached is not None:
        return cached
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    start = time.perf_counter()
    try:
        _, nbytes = _build(ct, shape, batch, precision, folder)
    except ModelBuildError:
        raise
    except Exception as exc:  # noqa: BLE001 - coremltools raises many types; its message is what matters
        raise ModelBuildError(
            f"coremltools cannot build the {precision} {shape.name} B={batch} model: {type(exc).__name__}: {exc}"
        ) from exc
    build_s = time.perf_counter() - start
    meta: Mapping[str, Any] = {
        "k": shape.k,
        "m": shape.m,
        "batch": batch,
        "precision": precision,
        "weight_bytes_in_model": nbytes,
        "coremltools": ct.__version__,
        "numpy": np.__version__,
        "seed": weight_seed(shape),
    }
    write_text_atomic(folder / "model.json", json.dumps(meta, indent=2) + "\n")
    return BuiltModel(
        key=key,
        folder=folder,
        shape=shape,
        batch=batch,
        precision=precision,
        weight_bytes_in_model=nbytes,
        build_s=build_s,
        cached=False,
        coremltools=ct.__version__,
    )


def model_summary(m: BuiltModel) -> Dict[str, Any]:
    """A built model as a JSON-ready dict for the results file."""
    return {
        "key": m.key,
        "k": m.shape.k,
        "m": m.shape.m,
        "batch": m.batch,
        "precision": m.precision,
        "weight_bytes_counted": weight_bytes(m.shape.k, m.shape.m, m.precision),
        "weight_bytes_in_model": m.weight_bytes_in_model,
        "accounting_ok": m.accounting_ok,
        "build_s": m.build_s,
        "cached": m.cached,
        "coremltools": m.coremltools,
    }
