"""Core ML's input checks and decisions (native/core/coreml_rules.h), run here through the bindings:
metal/coreml.mm calls the same functions on a Mac before and after it calls Core ML
(docs/design/studies.md, "The engines study")."""

from __future__ import annotations

import math

import numpy as np
import pytest

_core = pytest.importorskip("apple_roofline._native")._core


def test_compute_units_are_mlcomputeunits_raw_values() -> None:
    # MLModelConfiguration.h: CPUOnly = 0, CPUAndGPU = 1, All = 2, CPUAndNeuralEngine = 3
    assert [_core.coreml_compute_units(n) for n in ("CPU_ONLY", "CPU_AND_GPU", "ALL", "CPU_AND_NE")] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"compute units 'GPU' \(valid: CPU_ONLY, CPU_AND_GPU, CPU_AND_NE, ALL\)"):
        _core.coreml_compute_units("GPU")


def test_inputs_get_row_major_strides() -> None:
    assert _core.coreml_check_inputs([("a", [2, 3, 4], 24), ("b", [5], 5)], 1, 0.0) == [[12, 4, 1], [1]]


@pytest.mark.parametrize(
    "inputs,reps,warmup,message",
    [
        ([("a", [2, 0], 0)], 1, 1.0, "input 'a' has a dimension 0 (valid: 1 or more)"),
        ([("a", [2, -3], 6)], 1, 1.0, "input 'a' has a dimension -3"),
        ([("x", [2, 3], 5)], 1, 1.0, "input 'x' holds 5 values, its shape needs 6"),
        ([], 1, 1.0, "a prediction needs at least one input"),
        ([("a", [1], 1)], 0, 1.0, "reps must be at least 1"),
        ([("a", [1], 1)], 1, -1.0, "max_warmup_s must be >= 0"),
        ([("a", [1], 1)], 1, math.nan, "max_warmup_s must be >= 0"),
    ],
)
def test_bad_inputs_are_value_errors_naming_the_problem(inputs: list, reps: int, warmup: float, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _core.coreml_check_inputs(inputs, reps, warmup)


def test_warmup_stops_on_agreement_or_budget_after_the_minimum() -> None:
    done = _core.coreml_warmup_done
    assert not done(2, 3, 1.0e-3, 1.0e-3, 0.0, 2.0)  # agree, but under the minimum
    assert done(3, 3, 1.0e-3, 1.05e-3, 0.0, 2.0)  # within 10 %
    assert not done(3, 3, 1.0e-3, 1.2e-3, 0.5, 2.0)  # 17 % apart, budget left
    assert done(3, 3, 1.0e-3, 1.2e-3, 2.0, 2.0)  # budget spent
    assert not done(3, 3, -1.0, 1.0e-3, 0.0, 2.0)  # no previous prediction to agree with


def test_dtypes_are_mlmultiarraydatatype_raw_values() -> None:
    # MLMultiArray.h: Float16 = 0x10000 | 16, Float32 = 0x10000 | 32, Double = 0x10000 | 64, Int32 = 0x20000 | 32
    assert _core.coreml_dtype(0x10010) == ("float16", 2)
    assert _core.coreml_dtype(0x10020) == ("float32", 4)
    assert _core.coreml_dtype(0x10040) == ("float64", 8)
    assert _core.coreml_dtype(0x20020) == ("int32", 4)
    assert _core.coreml_dtype(0x20008) == ("", 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a,  # dense
        lambda a: a.T,  # transposed (column-major strides)
        lambda a: a[:, ::2],  # every other column
        lambda a: a.reshape(2, 3, 8).transpose(2, 0, 1),  # three dimensions, permuted
    ],
    ids=["dense", "transposed", "strided", "permuted"],
)
def test_dense_copy_matches_numpy(make) -> None:  # type: ignore[no-untyped-def]
    """Strides in elements from element 0 (MLMultiArray.h), as Core ML's getBytesWithHandler: gives them."""
    base = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    view = make(base)
    strides = [s // view.itemsize for s in view.strides]
    got = _core.coreml_dense_copy(base.tobytes(), list(view.shape), strides, view.itemsize)
    assert got == np.ascontiguousarray(view).tobytes()


def test_dense_copy_refuses_an_element_outside_the_bytes() -> None:
    with pytest.raises(ValueError, match="element 3 lies at element offset 3, outside the array's 12 bytes"):
        _core.coreml_dense_copy(b"\0" * 12, [4], [1], 4)


def test_the_compute_plan_wait_is_bounded_and_its_expiry_is_the_reason() -> None:
    """coreml_compute_plan waits at most COREML_COMPUTE_PLAN_WAIT_S for MLComputePlan's handler;
    past it the plan is unknown and its reason says why."""
    assert 0 < _core.COREML_COMPUTE_PLAN_WAIT_S < float("inf")
    why = _core.coreml_compute_plan_timeout("/tmp/m.mlpackage", _core.COREML_COMPUTE_PLAN_WAIT_S)
    assert why == (
        f"MLComputePlan did not deliver the plan of /tmp/m.mlpackage within {_core.COREML_COMPUTE_PLAN_WAIT_S:g} s "
        "(its completion handler never ran): which engines Core ML uses is not known"
    )
