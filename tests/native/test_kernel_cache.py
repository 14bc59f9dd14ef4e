"""The on-disk kernel cache (native/core/kernel_cache.h; docs/design/backends.md, "The kernel cache"), through
its test hooks: a second lookup hits; a corrupt entry (a flipped byte, a truncated file, another
key's entry) is rebuilt with a warning; a changed key component misses; where the cache lives, the
``off`` switch and an unwritable folder. The CUDA and Metal backends keep their compiled kernels
through the same code (tests/device/test_kernel_cache_gpu.py checks a second process compiles none)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

_core = pytest.importorskip("apple_roofline._native")._core

KEY: List[Tuple[str, str]] = [
    ("source", 'extern "C" __global__ void k() {}'),
    ("options", "--gpu-architecture=sm_90\n-DBLOCK=256\n"),
    ("entry", "k"),
    ("target", "sm_90"),
    ("nvrtc", "13.0"),
    ("driver", "13000"),
]
PAYLOAD = [b"sm_90", bytes(range(256)) * 4, b"compile log"]
COUNTS = ("hits", "misses", "rebuilt", "compiles", "stored")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder for the test (the place is read at every lookup)."""
    monkeypatch.setenv("APPLE_ROOFLINE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "kernels"


def _delta(before: Dict[str, Any]) -> Dict[str, Any]:
    """The counts since ``before`` and the warnings added since."""
    now = _core.kernel_cache_stats()
    out: Dict[str, Any] = {k: now[k] - before[k] for k in COUNTS}
    out["warnings"] = now["warnings"][len(before["warnings"]) :]
    return out


def _fetch(key: List[Tuple[str, str]], payload: List[bytes]) -> Tuple[List[bytes], Dict[str, Any]]:
    before = _core.kernel_cache_stats()
    got = _core.kernel_cache_fetch(key, payload)
    return got, _delta(before)


def _stored(cache_dir: Path) -> Path:
    path = Path(_core.kernel_cache_path(KEY))
    assert path.parent == cache_dir and path.suffix == ".arkc"
    _core.kernel_cache_fetch(KEY, PAYLOAD)
    assert path.is_file()
    return path


def test_a_second_lookup_hits_and_returns_the_stored_bytes(cache_dir: Path) -> None:
    got, d = _fetch(KEY, PAYLOAD)
    assert got == PAYLOAD
    assert (d["misses"], d["compiles"], d["stored"], d["hits"], d["rebuilt"]) == (1, 1, 1, 0, 0)
    got, d = _fetch(KEY, [b"something else"])  # what a build would give is not used: the entry is
    assert got == PAYLOAD
    assert (d["hits"], d["compiles"], d["misses"], d["stored"]) == (1, 0, 0, 0)
    assert d["warnings"] == []
    assert _core.kernel_cache_stats()["dir"] == str(cache_dir)


def test_the_entry_names_the_hash_of_its_key_and_holds_the_whole_key(cache_dir: Path) -> None:
    path = _stored(cache_dir)
    assert len(path.stem) == 16 and int(path.stem, 16) >= 0
    data = path.read_bytes()
    assert data.startswith(b"ARKCACHE")
    for name, value in KEY:  # the full key is stored, for the read to compare
        assert name.encode() in data and value.encode() in data
    assert [p.name for p in cache_dir.iterdir()] == [path.name]  # no temporary file left behind


@pytest.mark.parametrize("where", ["header", "key", "payload", "checksum"])
def test_a_flipped_byte_is_rebuilt_with_a_warning(cache_dir: Path, where: str) -> None:
    path = _stored(cache_dir)
    data = bytearray(path.read_bytes())
    at = {"header": 9, "key": 40, "payload": len(data) - 100, "checksum": len(data) - 1}[where]
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    got, d = _fetch(KEY, PAYLOAD)
    assert got == PAYLOAD
    assert (d["rebuilt"], d["compiles"], d["stored"], d["hits"]) == (1, 1, 1, 0)
    assert len(d["warnings"]) == 1 and str(path) in d["warnings"][0] and "rebuilt" in d["warnings"][0]
    assert path.read_bytes() != bytes(data)  # rewritten: the next lookup hits
    _, d = _fetch(KEY, PAYLOAD)
    assert (d["hits"], d["compiles"], d["warnings"]) == (1, 0, [])


@pytest.mark.parametrize("keep", [0, 5, 30, -1])
def test_a_truncated_entry_is_rebuilt_with_a_warning(cache_dir: Path, keep: int) -> None:
    path = _stored(cache_dir)
    data = path.read_bytes()
    path.write_bytes(data[:keep])
    got, d = _fetch(KEY, PAYLOAD)
    assert got == PAYLOAD
    assert (d["rebuilt"], d["compiles"], d["hits"]) == (1, 1, 0)
    assert len(d["warnings"]) == 1 and "truncated" in d["warnings"][0]


def test_an_entry_of_another_key_is_never_trusted(cache_dir: Path) -> None:
    """What a hash collision or a stale entry looks like: a valid entry under this key's name whose
    stored key differs."""
    other = KEY[:-1] + [("driver", "12080")]
    _core.kernel_cache_fetch(other, [b"stale"])
    Path(_core.kernel_cache_path(other)).replace(_core.kernel_cache_path(KEY))
    got, d = _fetch(KEY, PAYLOAD)
    assert got == PAYLOAD
    assert (d["rebuilt"], d["compiles"], d["hits"]) == (1, 1, 0)
    assert len(d["warnings"]) == 1 and "another key" in d["warnings"][0]


@pytest.mark.parametrize("part", [name for name, _ in KEY])
def test_a_changed_key_component_misses(cache_dir: Path, part: str) -> None:
    _core.kernel_cache_fetch(KEY, PAYLOAD)
    changed = [(n, v + " " if n == part else v) for n, v in KEY]
    assert _core.kernel_cache_path(changed) != _core.kernel_cache_path(KEY)
    got, d = _fetch(changed, [b"new"])
    assert got == [b"new"]
    assert (d["misses"], d["compiles"], d["hits"], d["rebuilt"], d["warnings"]) == (1, 1, 0, 0, [])


def test_parts_are_delimited_not_concatenated(cache_dir: Path) -> None:
    """("ab", "c") and ("a", "bc") are different keys."""
    a = [("ab", "c")]
    b = [("a", "bc")]
    assert _core.kernel_cache_path(a) != _core.kernel_cache_path(b)
    _core.kernel_cache_fetch(a, [b"a"])
    assert _core.kernel_cache_fetch(b, [b"b"]) == [b"b"]


def test_empty_and_binary_fields_round_trip(cache_dir: Path) -> None:
    payload = [b"", b"\x00\xff" * 1000, b"\x00"]
    _core.kernel_cache_fetch(KEY, payload)
    got, d = _fetch(KEY, [b"x"])
    assert got == payload and d["hits"] == 1


def test_off_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLE_ROOFLINE_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    stats = _core.kernel_cache_stats()
    assert stats["dir"] == "" and "APPLE_ROOFLINE_CACHE=off" in stats["why"]
    assert _core.kernel_cache_path(KEY) == ""
    for _ in range(2):
        got, d = _fetch(KEY, PAYLOAD)
        assert got == PAYLOAD
        assert (d["misses"], d["compiles"], d["stored"], d["hits"], d["warnings"]) == (1, 1, 0, 0, [])
    assert list(tmp_path.iterdir()) == []


def test_the_folder_follows_xdg_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("APPLE_ROOFLINE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _core.kernel_cache_stats()["dir"] == str(tmp_path / "xdg" / "apple_roofline" / "kernels")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG spec: a relative path is ignored
    home = _core.kernel_cache_stats()["dir"]
    under = ("Library", "Caches") if sys.platform == "darwin" else (".cache",)
    assert home == str(tmp_path.joinpath("home", *under, "apple_roofline", "kernels"))
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _core.kernel_cache_stats()["dir"] == home
    monkeypatch.delenv("HOME")
    stats = _core.kernel_cache_stats()
    assert stats["dir"] == "" and "HOME" in stats["why"]


def test_an_unwritable_folder_degrades_to_no_cache_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("not a folder")  # a folder under a file cannot be made, even by root
    monkeypatch.setenv("APPLE_ROOFLINE_CACHE", str(tmp_path / "file" / "cache"))
    got, d = _fetch(KEY, PAYLOAD)
    assert got == PAYLOAD
    assert (d["compiles"], d["stored"]) == (1, 0)
    assert len(d["warnings"]) == 1 and "cannot write" in d["warnings"][0] and "without a cache" in d["warnings"][0]
    for _ in range(2):  # one warning only; still compiles
        got, d = _fetch(KEY, PAYLOAD)
        assert got == PAYLOAD and (d["compiles"], d["warnings"]) == (1, [])


def test_concurrent_lookups_never_see_half_an_entry(cache_dir: Path) -> None:
    """Threads storing and reading one key at once (as cuda:all's processes do): every read is a
    whole entry or a miss, never a rebuild, and no temporary file is left."""
    big = [bytes([i % 251 for i in range(1 << 20)])]
    errors: List[str] = []
    before = _core.kernel_cache_stats()

    def work() -> None:
        for _ in range(10):
            if _core.kernel_cache_fetch(KEY, big) != big:
                errors.append("wrong bytes")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    d = _delta(before)
    assert errors == []
    assert d["rebuilt"] == 0 and d["warnings"] == []
    assert d["hits"] + d["misses"] == 40 and d["hits"] >= 1
    assert [p.name for p in cache_dir.iterdir()] == [Path(_core.kernel_cache_path(KEY)).name]


def test_a_run_reports_the_warnings_raised_during_it(cache_dir: Path) -> None:
    """CacheWarnings (what run_roofline adds to the run's warnings) gives those raised since it began."""
    from apple_roofline.kernel_cache import CacheWarnings, cache_stats

    path = _stored(cache_dir)
    path.write_bytes(path.read_bytes()[:-3])
    _core.kernel_cache_fetch(KEY, PAYLOAD)  # a warning before the run: not the run's
    path.write_bytes(path.read_bytes()[:-3])
    during = CacheWarnings()
    assert during.new() == []
    _core.kernel_cache_fetch(KEY, PAYLOAD)
    new = during.new()
    assert len(new) == 1 and new[0] == cache_stats()["warnings"][-1] and str(path) in new[0]


def test_an_entry_the_backend_rejects_is_removed(cache_dir: Path) -> None:
    """An archive Metal will not take is not read (and warned about) again in the next run."""
    path = _stored(cache_dir)
    before = _core.kernel_cache_stats()
    _core.kernel_cache_reject(KEY, "Metal finds no usable pipeline in the binary archive")
    assert not path.exists()
    assert _delta(before)["warnings"] == [
        f"kernel cache: {path}: Metal finds no usable pipeline in the binary archive; rebuilt"
    ]


def test_prune_removes_only_the_entries_its_rule_calls_stale(cache_dir: Path) -> None:
    """The Metal backend's rule: its own archives of another OS build go; entries of the current build
    and another producer's stay."""

    def key(producer: str, os: str) -> List[Tuple[str, str]]:
        return [("producer", producer), ("os", os), ("function", "k")]

    keys = [key("metal", "14.6 (23G80)"), key("metal", "15.1 (24B83)"), key("nvrtc", "14.6 (23G80)")]
    for k in keys:
        _core.kernel_cache_fetch(k, PAYLOAD)
    (cache_dir / "not-an-entry.arkc").write_bytes(b"junk")  # unreadable as an entry: left

    def stale(k: List[Tuple[str, str]]) -> bool:
        d = dict(k)
        return d.get("producer") == "metal" and d.get("os") != "15.1 (24B83)"

    assert _core.kernel_cache_prune(stale) == 1
    assert [Path(_core.kernel_cache_path(k)).exists() for k in keys] == [False, True, True]
    assert (cache_dir / "not-an-entry.arkc").exists()
    assert _core.kernel_cache_prune(stale) == 0


def test_a_tagged_note_is_replaced_by_the_next_with_its_tag() -> None:
    """The archive note keeps one line whose count stays current ('N of M not archived')."""
    before = _core.kernel_cache_stats()
    _core.kernel_cache_note("1 of 3 not archived", "test tag")
    _core.kernel_cache_note("an untagged note")
    _core.kernel_cache_note("2 of 5 not archived", "test tag")
    assert _delta(before)["warnings"] == ["kernel cache: 2 of 5 not archived", "kernel cache: an untagged note"]


_SPECIAL_ENTRY = """
import os, sys, time
from apple_roofline._native import _core
key = [("source", "k"), ("entry", "k")]
path = _core.kernel_cache_path(key)
os.makedirs(os.path.dirname(path), exist_ok=True)
{make}
began = time.monotonic()
got = _core.kernel_cache_fetch(key, [b"built"])
took = time.monotonic() - began
stats = _core.kernel_cache_stats()
again = _core.kernel_cache_fetch(key, [b"other"])  # the entry was rewritten as a regular file
print(took, got == [b"built"], again == [b"built"], os.path.isfile(path) and not os.path.islink(path))
print(stats["warnings"][-1] if stats["warnings"] else "")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero")
@pytest.mark.parametrize(
    "make, why",
    [("os.mkfifo(path)", "not a regular file"), ('os.symlink("/dev/zero", path)', "not a regular file")],
    ids=["fifo", "dev-zero"],
)
def test_an_entry_that_is_no_regular_file_is_rebuilt_at_once(tmp_path: Path, make: str, why: str) -> None:
    """A FIFO in an entry's place blocked the lookup for ever, a link to /dev/zero read until
    std::bad_alloc (issue 46): each is refused without being read, rebuilt with a warning, and
    replaced by a regular entry. In a subprocess, so that a regression fails instead of hanging."""
    import os
    import subprocess

    env = {**os.environ, "APPLE_ROOFLINE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", _SPECIAL_ENTRY.format(make=make)], capture_output=True, text=True, env=env, timeout=30
    )
    assert done.returncode == 0, done.stderr
    took, got, again, regular = done.stdout.split("\n")[0].split()
    assert float(took) < 1.0 and (got, again, regular) == ("True", "True", "True"), done.stdout
    warning = done.stdout.split("\n")[1]
    assert why in warning and "rebuilt" in warning, warning
