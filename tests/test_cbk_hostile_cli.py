"""cbk called directly with what a careful user tries to break it with:
values at and past their edges, products of parameters that do not fit,
target directories that cannot hold the run, its environment set to
garbage. Each is refused before anything is made (one line naming what is
wrong, exit 2, nothing left in --dir), or runs and says the truth."""
from __future__ import annotations

import subprocess

import pytest

from conftest import tree


@pytest.mark.timeout(120)
@pytest.mark.parametrize("bound", ["inf", "1e300", "1e19"])
def test_an_unbounded_finalize_timeout_ends_the_run_instead_of_hanging(run_cbk, bound):
    """CBK_FINALIZE_TIMEOUT_S=inf (or any value past what a timespec holds)
    made the watchdog's deadline garbage: pthread_cond_timedwait answered
    EINVAL at once, the watchdog looped on it holding its mutex, and cbk hung
    at 100 % CPU after writing every record, until killed. An infinite bound
    is no bound: cbk ends as soon as MPI_Finalize returns."""
    try:
        r = run_cbk("null", "--seconds=0", "--repetitions=1", env={"CBK_FINALIZE_TIMEOUT_S": bound}, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"cbk null with CBK_FINALIZE_TIMEOUT_S={bound} did not end within 20 s")
    assert r.status == 0 and r.stderr == "", r.stderr
    assert len(r.measurements()) == 1 and r.run_record()
