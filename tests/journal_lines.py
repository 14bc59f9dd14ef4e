"""A journal's keys as its file holds them, for the tests: one per complete record line, in file order.

``read_journal`` keeps a key written twice once (its first record), so a check made through it cannot
see a measurement journaled twice (a resume that appends its kept records again); this one counts the
lines themselves. Shared by tests/conftest.py's ``resume_check``, tests/unit and tests/native."""

from __future__ import annotations

import json
from os import PathLike
from typing import List, Union


def journal_keys(path: Union[str, "PathLike[str]"]) -> List[str]:
    """The ``key`` of every line after the header of the journal at ``path``, repeats included. A last
    line without its newline (a record torn by a kill) is left out, as the reader drops it."""
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    return [str(json.loads(line)["key"]) for line in lines[1:-1]]


def assert_each_key_once(path: Union[str, "PathLike[str]"]) -> List[str]:
    """The journal's keys (:func:`journal_keys`), after checking that none is on two lines."""
    keys = journal_keys(path)
    twice = sorted({k for k in keys if keys.count(k) > 1})
    assert not twice, f"{path}: {len(keys)} record lines, {len(set(keys))} keys; on more than one line: {twice}"
    return keys
