"""Robustness of `clusterbench import`: every real fixture mutated
(truncated, bytes flipped, lines dropped, doubled or swapped, digits
replaced, garbage inserted) with a fixed seed. Every case either imports
or ends in one clear line (BadInput, exit status 2), never another
exception, and a case that fails stores nothing. The bulk calls the import
in-process (fast); a few cases go through the command line."""
from __future__ import annotations

import random
import sys

import pytest
import sqlalchemy as sa

from conftest import REPO, run_bounded

from clusterbench.errors import BadInput
from clusterbench.importers.import_runs import Overrides, parse_bytes, parse_file, store_runs
from clusterbench.store import Store

FIXTURES = sorted((REPO / "tests" / "fixtures" / "import").iterdir())
CASES_PER_FIXTURE = 45   # x 69 fixtures: 3,105 cases
SEED = 20261123


def mutate(data: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(7)
    if kind == 0:                                   # cut short anywhere
        return data[:rng.randrange(len(data) + 1)]
    if kind == 1:                                   # flip bytes
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return bytes(b)
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    if kind == 2:                                   # drop lines
        del lines[i:i + rng.randint(1, 5)]
    elif kind == 3:                                 # double a line
        lines.insert(i, lines[i])
    elif kind == 4:                                 # swap two lines
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 5:                                 # figures replaced by other text
        lines[i] = bytes(rng.choice(b"-9x.e ,:\"{}[]") if chr(c).isdigit() else c for c in lines[i])
    else:                                           # garbage inserted
        lines.insert(i, bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))))
    return b"\n".join(lines)


def test_mutated_fixtures_import_or_fail_in_one_line_and_store_nothing_partial(tmp_path):
    rng = random.Random(SEED)
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    path = tmp_path / "case"
    outcomes = {"imported": 0, "refused": 0}
    stored = 0
    for fixture in FIXTURES:
        original = fixture.read_bytes()
        for case in range(CASES_PER_FIXTURE):
            data = mutate(original, rng)
            try:
                runs = parse_bytes(str(path), data)   # in memory: writing 2,000 files costs more than parsing
            except BadInput as e:
                assert e.message and "\n" not in e.message and str(path) in e.message, (fixture.name, case)
                # the parsers say what is wrong themselves: import_runs' net for their defects stays unused
                assert "cannot read this file (" not in e.message, (fixture.name, case, e.message)
                outcomes["refused"] += 1
                continue
            except Exception as e:   # noqa: BLE001 - the point of the test
                pytest.fail(f"{fixture.name} case {case}: {type(e).__name__}: {e}")
            outcomes["imported"] += 1
            for run in runs:
                assert run.sample_count > 0
            if case == 0:   # storing is slower: the first import of each fixture
                path.write_bytes(data)
                stored += len(store_runs(store, runs, str(path), Overrides()))
    total = sum(outcomes.values())
    assert total >= 2000 and outcomes["imported"] > 100 and outcomes["refused"] > 100, outcomes
    with store.engine.connect() as c:
        assert c.execute(sa.text("select count(*) from runs")).scalar() == stored
        assert c.execute(sa.text("select count(*) from runs where imported_from is null")).scalar() == 0


def test_not_utf8_binary_and_empty_files_are_one_line(tmp_path):
    for name, data in (("bin", bytes(range(256)) * 4), ("empty", b""), ("latin1", "Größe: 5 µs\n".encode("latin-1")),
                       ("dir", None)):
        p = tmp_path / name
        p.mkdir() if data is None else p.write_bytes(data)
        with pytest.raises(BadInput) as e:
            parse_file(str(p))
        assert "\n" not in e.value.message and str(p) in e.value.message


@pytest.mark.timeout(120)
def test_a_few_mutated_cases_through_the_command_line(tmp_path):
    rng = random.Random(SEED + 1)
    db = tmp_path / "cli.db"
    for fixture in FIXTURES[::25]:
        p = tmp_path / fixture.name
        p.write_bytes(mutate(fixture.read_bytes(), rng))
        r = run_bounded([sys.executable, "-m", "clusterbench", "import", "--db", str(db), str(p)], timeout=60)
        assert r.returncode in (0, 2), r.stderr
        assert "Traceback" not in r.stderr
        if r.returncode == 2:
            assert r.stderr.startswith("Error: ") and r.stderr.strip().count("\n") == 0, r.stderr
