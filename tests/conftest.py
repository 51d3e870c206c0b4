"""Shared test fixtures: the cbk binary under test, and a runner for it.

The cbk under test is $CLUSTERBENCH_CBK when set, else the one installed
beside the Python running the tests (scripts/setup.sh puts it there), else
build/cbk of a developer's CMake build.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

import process_guard
from cli_client import run_bounded  # noqa: F401  (the tests import it from here)

REPO = Path(__file__).resolve().parent.parent

# A suite started as a background job (`nohup ... &`, a CI runner's shell) inherits SIGINT
# ignored, and Python then installs no KeyboardInterrupt handler: a test that stops a command
# in-process with SIGINT (signal.raise_signal) saw it ignored and the command end 0, and every
# child inherited the ignored SIGINT a test sends it (three failures in one such run, 2026-12-07).
# Each pytest process takes a terminal's SIGINT; a test of an ignored one sets it itself.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# fixtures/ holds copies of /sys trees whose symlinks loop, as the real ones do
collect_ignore = ["fixtures"]


def find_cbk() -> str | None:
    candidates = [
        os.environ.get("CLUSTERBENCH_CBK"),
        str(Path(sys.executable).parent / "cbk"),
        str(REPO / "build" / "cbk"),
        shutil.which("cbk"),
    ]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    return None


def terminal_sigint() -> None:
    """preexec_fn for a CLI a test stops with a signal: a shell's background job
    (a CI job started with `&`) ignores SIGINT, a suite started under nohup
    ignores SIGHUP, the suite's children inherit that, and clusterbench and cbk
    keep an ignored SIGINT, SIGHUP or SIGQUIT ignored (as nohup asks), so the
    signal would never arrive. Gives the child the dispositions a terminal's
    command has."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


def start_under_nohup(argv: list[str], env: dict) -> subprocess.Popen:
    """A command started as `nohup CMD &` from a terminal would be: SIGHUP ignored, SIGINT as a
    terminal gives it, in a process group of its own (the job's), its output piped here."""
    def nohup() -> None:
        terminal_sigint()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=nohup)


@contextlib.contextmanager
def killed_if_left(p: subprocess.Popen):
    """The test's body; then p's process group killed if p outlived it (a failed assertion)."""
    try:
        yield p
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def hang_up(p: subprocess.Popen, timeout_s: float = 120) -> tuple[str, str]:
    """SIGHUP to the job's process group, as the shell of a closed terminal sends it; p's output."""
    os.killpg(p.pid, signal.SIGHUP)
    return p.communicate(timeout=timeout_s)


@dataclass
class CbkResult:
    status: int
    records: list[dict]
    errors: list[dict]
    stderr: str

    def measurements(self, phase: str | None = None) -> list[dict]:
        return [r for r in self.records
                if r.get("type") == "measurement" and (phase is None or r.get("phase") == phase)]

    def run_record(self) -> dict:
        runs = [r for r in self.records if r.get("type") == "run"]
        assert len(runs) == 1, self.records
        return runs[0]


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    assert not duplicated, f"cbk wrote a record with duplicate keys: {duplicated}"
    return dict(pairs)


def _parse_lines(text: str) -> list[dict]:
    """cbk's JSON lines, parsed strictly: a duplicate key fails the test."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line, object_pairs_hook=_no_duplicate_keys))
    return out


@pytest.fixture(scope="session")
def cbk_bin() -> str:
    path = find_cbk()
    if not path:
        pytest.fail("no cbk binary: run scripts/setup.sh --test or set CLUSTERBENCH_CBK")
    return path


def _second_build(variable: str, build: str, script: str, what: str) -> str:
    """A second cbk that scripts/setup.sh --test builds beside the default one: $variable,
    else .venv/<build>/cbk. Missing fails under CI, else skips the tests that need it."""
    path = os.environ.get(variable) or str(REPO / ".venv" / build / "cbk")
    if os.access(path, os.X_OK):
        return path
    message = f"no cbk {what} at {path}: run scripts/{script}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def cuda_cbk() -> str:
    """The cbk built with CUDA (scripts/build-cuda-cbk.sh)."""
    return _second_build("CLUSTERBENCH_CBK_CUDA", "cuda-build", "build-cuda-cbk.sh", "built with CUDA")


@pytest.fixture(scope="session")
def gpu_test_cbk() -> str:
    """The cbk whose GPU kernels run on the test runtime, host memory standing in for
    a GPU (scripts/build-gpu-test-cbk.sh)."""
    return _second_build("CLUSTERBENCH_CBK_GPU_TEST", "gpu-test-build", "build-gpu-test-cbk.sh",
                         "built on the GPU test runtime")


@pytest.fixture(scope="session")
def mpiexec(cbk_bin) -> str:
    """mpiexec of the MPI cbk was built with; skips when cbk has no MPI."""
    desc = json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True, check=True).stdout)
    if not desc["mpi"]:
        pytest.skip("cbk was built without MPI")
    exe = shutil.which("mpiexec", path=str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""))
    if not exe:
        pytest.skip("no mpiexec on PATH")
    return exe


@pytest.fixture
def run_cbk(cbk_bin):
    """run_cbk(kernel, *args, launcher=None, timeout=120, env=None) -> CbkResult."""

    def run(kernel: str, *args: str, launcher: list[str] | None = None, timeout: float = 120,
            env: dict | None = None) -> CbkResult:
        cmd = (launcher or []) + [cbk_bin, kernel, *args]
        full_env = dict(os.environ, **(env or {}))
        p = run_bounded(cmd, timeout=timeout, env=full_env)
        errors = [r for r in _parse_lines(p.stderr) if r.get("type") == "error"]
        return CbkResult(p.returncode, _parse_lines(p.stdout), errors, p.stderr)

    return run


@dataclass
class CliResult:
    status: int
    stdout: str
    stderr: str


STORE_BACKENDS = ("sqlite", "postgresql")


def gpu_visible() -> bool:
    """An NVIDIA GPU this process can use: nvidia-smi lists one."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return listed.returncode == 0 and "GPU " in listed.stdout


def pytest_configure(config):
    config.addinivalue_line("markers", "both_stores: run the test against a SQLite and a PostgreSQL store")
    config.addinivalue_line("markers", "long_module: a module of a minute or more (a test cluster, Slurm, Grid "
                                       "Engine, GlusterFS): scheduled first, so it does not end the parallel phase "
                                       "on one worker while the other waits")
    # A launch that cannot end (a rank spinning in MPI_Finalize, a peer that
    # never answers) fails its step with the reason within this bound, well
    # inside pytest-timeout's, instead of failing the test by a timeout that
    # kills the test and leaves the processes running.
    os.environ.setdefault("CLUSTERBENCH_STEP_TIMEOUT", "150")
    # cbk's bound on MPI_Finalize (kernels/core/finalize.c): the default 20 s
    # is for large jobs; the test jobs have at most a few ranks, whose
    # finalize ends within a second even at load 8. Debian's MPICH on UCX
    # stalls it in about 1 of 8 runs across test hosts (docs/testbed.md),
    # one rank spinning until the bound: every second of it is CPU the
    # rest of the suite waits for.
    os.environ.setdefault("CBK_FINALIZE_TIMEOUT_S", "3")
    swept = process_guard.sweep_dead_sessions()
    os.environ[process_guard.VAR] = process_guard.shared_tag()
    if swept:
        print(f"conftest: killed {len(swept)} process(es) left by a suite that was killed: "
              + "; ".join(f"{pid} {cmd[:80]}" for pid, cmd in swept))
    config.addinivalue_line("markers", "gpu: needs a GPU; skipped where none is visible (CI), run on a GPU machine")
    config.addinivalue_line("markers", "no_gpu: checks the refusal on a host without a GPU; skipped where one is visible")
    # the per-boot command cache (environment/command_cache.py) of the tests and of every
    # clusterbench they start: in a folder of their own, not the user's ~/.cache
    import stale_suites

    config.test_cache_home = str(stale_suites.marked_temp_dir("clusterbench-test-cache-"))
    os.environ["XDG_CACHE_HOME"] = config.test_cache_home


def pytest_unconfigure(config):
    shutil.rmtree(getattr(config, "test_cache_home", ""), ignore_errors=True)


_test_index = iter(range(1, 1 << 30))


@pytest.fixture(autouse=True)
def no_process_left_behind(request):
    """Tags what the test starts; fails it if any of that outlives it
    (tests/process_guard.py). Autouse and function-scoped: set up after the
    fixtures of wider scope, torn down after the test's other fixtures."""
    tag = process_guard.test_tag(next(_test_index))
    os.environ[process_guard.VAR] = tag
    yield
    # what starts between tests (a fixture of module scope) is the session's
    os.environ[process_guard.VAR] = process_guard.shared_tag()
    left = process_guard.left_behind(tag)
    if left:
        pytest.fail("processes outlived the test (killed now): "
                    + "; ".join(f"{pid} {cmd[:160]}" for pid, cmd in left), pytrace=False)


# the signals whose disposition a command changes as it runs and leaves (launch/stop_signals.py)
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


@pytest.fixture(autouse=True)
def signal_dispositions_kept():
    """Puts back this process's signal handlers after each test. A command
    run in-process (click's CliRunner) leaves its stop signals ignored as it
    exits (stop_signals.dropped_from_now); a test that did not put them back
    left the pytest worker ignoring SIGTERM, SIGINT and SIGHUP, and every
    process a later test started inherited that across fork and exec: a
    multiprocessing pool that never ended on terminate(), a holder process
    `kill` could not end, a shell whose `trap ... TERM` a non-interactive sh
    may not set (three tests of one worker hung or failed, CI runs of
    2026-12-07)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in _STOP_SIGNALS}
    yield
    for sig, handler in before.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)


def pytest_sessionstart(session):
    """The controller (or a run without workers) marks its pytest folder and
    takes down what a suite killed with -9 left up or mounted
    (tests/stale_suites.py); its processes were swept in pytest_configure.
    It notes the MPI files in /dev/shm, to remove at its end those its
    killed ranks leave (tests/shm_debris.py)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import shm_debris

    session.config.shm_before = shm_debris.mpi_files()
    session.config.hydra_before = shm_debris.hydra_files()
    if os.geteuid() != 0:
        return
    import stale_suites

    basetemp = session.config._tmp_path_factory.getbasetemp()
    stale_suites.mark(basetemp)
    swept = stale_suites.sweep(basetemp)
    if swept:
        print(f"conftest: took down {len(swept)} thing(s) a killed suite left: " + "; ".join(swept))


def pytest_sessionfinish(session, exitstatus):
    import cli_client

    cli_client.stop()   # the fork server carries the session's tag: it must be gone before the check
    left = process_guard.left_behind(process_guard.SESSION, wait_s=5.0)
    if left:
        print("\nprocesses of the suite outlived it (killed now): "
              + "; ".join(f"{pid} {cmd[:160]}" for pid, cmd in left))
        session.exitstatus = 1
    if not os.environ.get("PYTEST_XDIST_WORKER") and hasattr(session.config, "shm_before"):
        import shm_debris

        files, size = shm_debris.remove_left(session.config.shm_before)
        if files:
            print(f"\nconftest: removed {files} MPI shared-memory file(s), {size / 2**20:.0f} MiB, "
                  "that ranks killed with -9 left in /dev/shm")
        hydra = shm_debris.remove_hydra_left(session.config.hydra_before)
        if hydra:
            print(f"conftest: removed {hydra} hwloc topology file(s) that an mpiexec killed with -9 left")


def pytest_collection_modifyitems(config, items):
    """Modules marked long_module first (scripts/test.sh keeps this order,
    --no-loadscope-reorder); tests marked gpu skip without a GPU, tests
    marked no_gpu with one."""
    items.sort(key=lambda item: item.get_closest_marker("long_module") is None)   # stable: the rest in file order
    marked = [i for i in items if i.get_closest_marker("gpu") or i.get_closest_marker("no_gpu")]
    if not marked:
        return
    has_gpu = gpu_visible()
    for item in marked:
        if item.get_closest_marker("gpu") and not has_gpu:
            item.add_marker(pytest.mark.skip(reason="needs a GPU: none visible (nvidia-smi -L lists none)"))
        if item.get_closest_marker("no_gpu") and has_gpu:
            item.add_marker(pytest.mark.skip(reason="checks the refusal without a GPU, and this host has one"))


def pytest_generate_tests(metafunc):
    """Tests marked both_stores get store_url once per backend."""
    if "store_url" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_stores"):
        metafunc.parametrize("store_url", STORE_BACKENDS, indirect=True)


@pytest.fixture
def machine_settings_changed():
    """Held by a test that changes what every process of the machine shares
    (THP, vm.dirty_*, PM QoS, clusterbench's memory cgroups, which other tests
    count): no other such test, and no test judging one, runs meanwhile, in
    this suite or another (tests/machine_settings.py)."""
    import machine_settings

    with machine_settings.held(exclusive=True):
        yield


@pytest.fixture
def machine_settings_steady():
    """Held by a test whose verdict depends on a machine-wide setting (THP
    for huge pages): none changes while it runs."""
    import machine_settings

    with machine_settings.held(exclusive=False):
        yield


@pytest.fixture(scope="session")
def postgres_server():
    """A private PostgreSQL server for the whole session (tests/postgres_server.py).
    Skipped only where Debian's postgresql is not installed; under CI a missing
    server fails, as setup.sh --test installs it."""
    from postgres_server import PostgresServer, server_bin_dir

    if server_bin_dir() is None:
        message = "no PostgreSQL server binaries: install Debian's postgresql (scripts/apt-packages-test.txt)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with process_guard.shared():   # it serves every later test: it must not carry this one's tag
        import stale_suites

        server = PostgresServer.start(root=stale_suites.marked_temp_dir("cb-pg-"))
    yield server
    server.stop()


@pytest.fixture
def store_url(request, tmp_path) -> str:
    """A private empty store: SQLite by default, or a fresh PostgreSQL database
    for tests marked both_stores (parametrised as store_url[postgresql])."""
    if getattr(request, "param", "sqlite") == "postgresql":
        return request.getfixturevalue("postgres_server").new_database()
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.fixture
def cli(cbk_bin, store_url):
    """cli(*args, timeout=300) runs `python -m clusterbench` against a private store."""

    def run(*args: str, timeout: float = 300, env: dict | None = None) -> CliResult:
        full_env = {**os.environ, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": store_url, "COLUMNS": "200",
                    "PATH": str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""), **(env or {})}
        p = run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=timeout, env=full_env)
        return CliResult(p.returncode, p.stdout, p.stderr)

    return run


def as_json(value):
    """A JSON column read with raw SQL: text on SQLite, already parsed on PostgreSQL."""
    return json.loads(value) if isinstance(value, str) else value


def tree(path: Path) -> list[str]:
    """Everything under path, for 'nothing left behind' checks."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.fixture(scope="session")
def cbk_minimal(tmp_path_factory) -> Path:
    """A cbk built with every optional part off (MPI, OpenMP, liburing,
    libaio, CUDA), once for all the suite's workers (the folder beside
    theirs, under a lock): the tests of a build without MPI and of one
    without randio's engines share it, and a build is 10-20 s. CMake's
    configure output is kept beside it (configure.txt)."""
    import fcntl

    cmake = shutil.which("cmake")
    if not cmake:
        pytest.skip("cmake not on PATH")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent   # the run's folder, above each worker's
    build = shared / "cbk-minimal"
    with open(shared / "cbk-minimal.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (build / "cbk").exists():
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            configured = subprocess.run([cmake, "-S", str(REPO), "-B", str(build), *generator, *MINIMAL_BUILD],
                                        check=True, capture_output=True, text=True)
            (build / "configure.txt").write_text(configured.stdout)
            subprocess.run([cmake, "--build", str(build), "-j2"], check=True, capture_output=True)
    return build / "cbk"


MINIMAL_BUILD = ("-DCBK_WITH_MPI=OFF", "-DCBK_WITH_OPENMP=OFF", "-DCBK_WITH_LIBURING=OFF", "-DCBK_WITH_LIBAIO=OFF",
                 "-DCBK_WITH_CUDA=OFF")


def store_at(url: str, revision: str):
    """An engine on a store made at an older revision (its migrations up to
    `revision` only), as a store written by an older clusterbench is."""
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from clusterbench.store.revisions import MIGRATIONS

    engine = sa.create_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    return engine


def store_rows(url: str, sql: str) -> list:
    """Rows of a SQL query against a test's store."""
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    with eng.connect() as c:
        return c.execute(sa.text(sql)).all()


def failed_steps(url: str) -> str:
    """What a test prints when a run it expected to pass did not: each step
    that did not end ok, with the reason the store kept."""
    try:
        rows = store_rows(url, "select name, host, status, message from steps where status != 'ok'")
    except Exception as e:   # the store itself may be what broke
        return f"(store unreadable: {e})"
    return "\n".join(f"step {name!r} on {host or '-'}: {status}: {message}" for name, host, status, message in rows)


def wait_for_data_file(root: Path, timeout_s: float = 20) -> bool:
    """True once a kernel's file named `data` exists under root (its timed part is about to start)."""
    import time

    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if any(root.rglob("data")):
            return True
        time.sleep(0.02)
    return False
