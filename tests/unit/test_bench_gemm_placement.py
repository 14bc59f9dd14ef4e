"""bench/bench_gemm_placement.py's pure parts: the layouts it times (the same product, B stored two
ways), the order of its configurations, its summary (outliers apart, ratios to the reference
measured in the same run) and its option checks. No GPU is needed."""

from __future__ import annotations

import numpy as np
import pytest

from bench_scripts import load_bench

placement = load_bench("bench_gemm_placement")


def test_int8_has_both_layouts_of_the_same_product_and_fp32_one() -> None:
    both = placement.layouts("int8", 32)
    assert list(both) == [placement.AS_DRAWN, placement.TRANSPOSED]
    a, b, a_st, b_st = both[placement.AS_DRAWN]
    assert np.array_equal(b_st.T, b)  # the library takes B transposed: stored N×K, as drawn
    ta, tb, ta_st, tb_st = both[placement.TRANSPOSED]
    assert np.array_equal(ta, a) and np.array_equal(tb_st, np.ascontiguousarray(tb.T))
    assert tb_st.flags.c_contiguous and not np.array_equal(tb, b)  # another product's B, same draws
    assert list(placement.layouts("fp32", 32)) == [placement.AS_DRAWN]


def test_configurations_run_every_pad_and_layout_in_each_round() -> None:
    got = list(placement.configurations([0, 17], ["x", "y"], 2))
    assert got[:4] == [(0, 0, "x"), (0, 0, "y"), (0, 17, "x"), (0, 17, "y")] and len(got) == 8
    assert got[4:] == [(1, p, n) for _, p, n in got[:4]]


def test_the_summary_leaves_outliers_apart_and_compares_with_the_first_configuration() -> None:
    rows = [
        {"pad_mib": 0, "layout": "as drawn", "rates": [1430.0, 1428.0, 1432.0]},
        {"pad_mib": 1, "layout": "as drawn", "rates": [1444.0, 789.8, 1441.0, 1446.0]},
        {"pad_mib": 0, "layout": "as drawn", "rates": [1429.0, 1431.0]},
    ]
    first, second = placement.summarize(rows)
    assert (first["pad_mib"], first["measurements"], first["outliers"]) == (0, 5, 0)
    assert first["median"] == 1430.0 and first["ratio"] == 1.0
    assert first["low"] == pytest.approx(1428.0 / 1430.0) and first["high"] == pytest.approx(1432.0 / 1430.0)
    assert (second["measurements"], second["outliers"], second["median"]) == (3, 1, 1444.0)
    assert second["ratio"] == pytest.approx(1444.0 / 1430.0)
    text = placement.table([first, second], "TOPS")
    assert "| 1 | as drawn | 1,444 | -0.2 to +0.1 % | 1 | 1.0098 |" in text


@pytest.mark.parametrize("bad", ["", "x", "1,-2", "70000"])
def test_pads_outside_the_range_are_refused_with_it(bad: str) -> None:
    with pytest.raises(ValueError, match="--pads"):
        placement.parse_pads(bad)
    assert placement.parse_pads("0,1,17,100") == [0, 1, 17, 100]
