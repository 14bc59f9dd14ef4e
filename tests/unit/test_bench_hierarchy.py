"""bench/bench_hierarchy_ncu.py's pure parts: ncu's CSV page and the per-level verdicts. The sample
page has the layout of ``ncu --csv --print-units base`` (its header and quoted cells), with made-up
counts."""

from __future__ import annotations

import pytest

from bench_scripts import load_bench

_PAGE = """==PROF== Connected to process 4242 (/usr/bin/python3)
==PROF== Profiling "hier_read": 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3","127.0.0.1","hier_read","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes.sum","byte","1,024"
"0","4242","python3","127.0.0.1","hier_read","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_bytes.sum","byte","73400320"
"0","4242","python3","127.0.0.1","hier_read","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","Command line profiler metrics","lts__t_bytes.sum","byte","4325376"
"1","4242","python3","127.0.0.1","hier_read","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","Command line profiler metrics","lts__t_bytes.sum","byte","500000000"
"""


def test_the_csv_page_gives_one_dict_per_launch() -> None:
    b = load_bench("bench_hierarchy_ncu")
    got = b.parse_ncu_csv(_PAGE)
    assert got == [
        {"dram__bytes.sum": 1024.0, "l1tex__t_bytes.sum": 73400320.0, "lts__t_bytes.sum": 4325376.0},
        {"lts__t_bytes.sum": 5e8},
    ]
    assert b.parse_ncu_csv("==PROF== no kernels were profiled") == []


def test_each_case_is_judged_by_the_counter_of_its_level() -> None:
    b = load_bench("bench_hierarchy_ncu")
    cases = [
        {"kernel": "read", "level": "L1", "bytes": 73400320, "working_set_bytes": 65536, "valid": True},
        {"kernel": "read", "level": "L2", "bytes": 440000000, "working_set_bytes": 13 << 20, "valid": True},
        {"kernel": "read", "level": "DRAM", "bytes": 1, "working_set_bytes": 400 << 20, "valid": True},
    ]
    rows = b.verdicts(cases, b.parse_ncu_csv(_PAGE) + [{}])
    assert [r["metric"] for r in rows] == ["l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum"]
    assert rows[0]["ratio"] == pytest.approx(1.0) and rows[0]["verdict"] == "PASS"
    assert rows[1]["ratio"] == pytest.approx(0.88) and rows[1]["verdict"] == "FAIL"
    assert rows[2]["ratio"] is None and rows[2]["verdict"] == "NOT RUN"
