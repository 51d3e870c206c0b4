"""cbk's memory checks under a cgroup v2 memory limit, on this machine's real
kernel interfaces: no test hook in cbk.

Test hosts may be hybrid (v1 controllers, memory among them, and a cgroup2
mount without the memory controller, so no memory.max to read). Each case
runs cbk in a private mount namespace (`unshare --mount`) after moving it
into a real child cgroup of the cgroup2 hierarchy, so /proc/self/cgroup and
/proc/self/mountinfo say what they say under a Slurm job or in a container;
then a plain directory holding memory.max, memory.current and memory.stat
is bind-mounted over that cgroup's directory (cgroupfs will not make those
files; a mount shadows them), in that namespace only. The namespace dies
with cbk: nothing stays mounted; the fixtures remove the cgroups.

stream's check (three arrays in half of what is available) is the probe:
64 MiB arrays need 384 MiB of headroom."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from pathlib import Path

import pytest

from conftest import run_bounded

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="moving a process between cgroups and mounting need "
                                                          "root (CI runs as root)")

MiB = 1 << 20
ARRAYS = ("stream", "--array-size=64m", "--passes=2", "--threads=1")
REFUSED = re.compile(r"more than half of the ([0-9.]+) GiB available( under this process's memory cgroup limit)?")


def mounts(fstype: str) -> list[tuple[str, str, str]]:
    """(root, mount point, super options) of each mount of fstype, octal escapes decoded."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, tail = line.split(" - ", 1)
        f, t = fields.split(), tail.split()
        if t[0] == fstype:
            found.append(tuple(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), s)
                               for s in (f[3], f[4], t[2] if len(t) > 2 else "")))
    return found


def unified_mount() -> Path:
    tops = [point for root, point, _ in mounts("cgroup2") if root == "/"]
    if not tops:
        pytest.skip("no cgroup2 mount of the whole hierarchy in /proc/self/mountinfo")
    return Path(tops[0])


def remove_when_empty(*groups: Path) -> None:
    """rmdir, innermost first; a cgroup is busy for a moment after its last process is reaped."""
    for g in groups:
        for _ in range(100):
            try:
                g.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
        assert not g.exists(), f"cgroup {g} left behind"


@pytest.fixture
def v2_group():
    """A real cgroup "cbk-test-PID-HEX job" with a child "step 0" in the
    cgroup2 hierarchy (spaces as systemd and sites allow them); removed after."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1) (util-linux) to make a private mount namespace with")
    top = unified_mount() / f"cbk-test-{os.getpid()}-{secrets.token_hex(3)} job"
    try:
        (top / "step 0").mkdir(parents=True)
    except OSError as e:
        pytest.skip(f"cannot make a cgroup under {top.parent}: {e.strerror}")
    yield top
    remove_when_empty(top / "step 0", top)


@pytest.fixture
def v1_memory_group():
    """A real child of this process's v1 memory cgroup, for its limit to meet v2's."""
    own = [ln.split(":", 2)[2] for ln in Path("/proc/self/cgroup").read_text().splitlines()
           if "memory" in ln.split(":", 2)[1].split(",")]
    points = [point for root, point, opts in mounts("cgroup") if root == "/" and "memory" in opts.split(",")]
    if not own or not points:
        pytest.skip("no cgroup v1 memory hierarchy mounted whole here (a v2-only host, a container): "
                    "no v1 limit for v2's to meet")
    group = Path(points[0] + own[0]) / f"cbk-test-{os.getpid()}-{secrets.token_hex(3)}"
    group.mkdir()
    yield group
    remove_when_empty(group)


def limited(limit_mib: int, charged_mib: int, inactive_file_mib: int = 0) -> dict[str, str]:
    return {"memory.max": f"{limit_mib * MiB}\n", "memory.current": f"{charged_mib * MiB}\n",
            "memory.stat": f"anon {charged_mib * MiB}\ninactive_file {inactive_file_mib * MiB}\nactive_file 0\n"}


UNLIMITED = {"memory.max": "max\n", "memory.current": f"{100 * MiB}\n", "memory.stat": "anon 0\ninactive_file 0\n"}


def fake_tree(where: Path, groups: dict[str, dict[str, str]]) -> Path:
    """A directory tree of cgroup files: {relative dir: {file: text}}."""
    for rel, files in groups.items():
        (where / rel).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (where / rel / name).write_text(text)
    return where


# In the namespace: join the cgroup (and the v1 one), note what the kernel
# says we are in, shadow the cgroup files, exec cbk. Layouts:
#   host     the whole hierarchy mounted (a Slurm job on a v2 host)
#   subtree  only the job's subtree mounted, at a point with a space in it
#            (a container sharing the host's cgroup namespace): mountinfo's
#            root is the job's cgroup, written with \040 for its spaces
#   cgroupns a private cgroup namespace and a fresh cgroup2 mount where the
#            host's was (docker, podman): /proc/self/cgroup says "0::/", the
#            mount's root is "/"
#   cgroupns+host  the same mounted beside the host's mount, which is listed
#            first, its root "/../.." from inside (a tool that only unshares -C)
SCRIPT = r'''set -e
echo $$ > "$GROUP/step 0/cgroup.procs"
[ -z "$V1" ] || echo $$ > "$V1/cgroup.procs"
case $LAYOUT in
host)     grep '^0::' /proc/self/cgroup > "$SEEN"; mount --bind "$FAKE" "$GROUP" ;;
subtree)  grep '^0::' /proc/self/cgroup > "$SEEN"; mount --bind "$GROUP" "$POINT"; umount "$UNIFIED"
          mount --bind "$FAKE" "$POINT" ;;
cgroupns*) exec unshare --cgroup -- sh -c 'set -e; grep "^0::" /proc/self/cgroup > "$SEEN"
          if [ "$LAYOUT" = cgroupns ]; then umount "$UNIFIED"; at=$UNIFIED; else at=$NEAR; fi
          mount -t cgroup2 cgroup2 "$at"; mount --bind "$FAKE" "$at"; exec "$@"' sh "$@" ;;
esac
exec "$@"
'''


def cbk_in(cbk_bin: str, group: Path, fake: Path, tmp_path: Path, *args: str, layout: str = "host",
           v1: Path | None = None) -> tuple[str, str]:
    """cbk ARGS run inside `group/step 0`: (what /proc/self/cgroup said, cbk's output)."""
    seen, point, near = tmp_path / "seen", tmp_path / "cgroup root", tmp_path / "cgroup"
    point.mkdir(exist_ok=True)
    near.mkdir(exist_ok=True)
    env = dict(os.environ, GROUP=str(group), FAKE=str(fake), SEEN=str(seen), POINT=str(point), NEAR=str(near),
               UNIFIED=str(group.parent), LAYOUT=layout, V1=str(v1 or ""))
    p = run_bounded(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", SCRIPT, "sh",
                     cbk_bin, *args], timeout=60, env=env)
    out = p.stdout + p.stderr
    assert seen.exists() and p.returncode in (0, 2), out   # the namespace was set up and cbk ended
    assert (p.returncode == 2) == ('"type":"error"' in out), out
    return seen.read_text().strip(), "\n".join(ln for ln in out.splitlines() if '"type":"measurement"' not in ln
                                               or '"phase":"triad"' in ln)


def refusal(out: str) -> tuple[str, bool] | None:
    """(GiB shown available, whether the cgroup is named) of stream's refusal; None when it ran."""
    m = REFUSED.search(out)
    if m is None:
        assert '"phase":"triad"' in out, out
        return None
    return m[1], m[2] is not None


CASES = {
    # 512 MiB less 400 charged plus 8 reclaimable page cache: 120 MiB = 0.12 GiB
    "own limit less charged plus inactive page cache": ({"step 0": limited(512, 400, 8), "": UNLIMITED}, ("0.12", True)),
    "a limit on the job only, none on the step (walk-up)": ({"step 0": UNLIMITED, "": limited(768, 512)}, ("0.25", True)),
    "the smallest along the path": ({"step 0": limited(2048, 0), "": limited(768, 512)}, ("0.25", True)),
    "a large limit runs": ({"step 0": limited(2048, 100), "": UNLIMITED}, None),
    "max (no limit) anywhere runs": ({"step 0": UNLIMITED, "": UNLIMITED}, None),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", CASES)
def test_stream_is_refused_by_a_cgroup_v2_limit_too_small_for_its_arrays(cbk_bin, v2_group, tmp_path, case):
    groups, expected = CASES[case]
    seen, out = cbk_in(cbk_bin, v2_group, fake_tree(tmp_path / "fake", groups), tmp_path, *ARRAYS)
    assert seen == f"0::/{v2_group.name}/step 0"   # the kernel's word: the rank is in the child cgroup
    assert refusal(out) == expected, out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("layout", ["subtree", "cgroupns", "cgroupns+host"])
def test_a_containers_view_of_the_cgroup_v2_hierarchy_is_read(cbk_bin, v2_group, tmp_path, layout):
    """What a container mounts is the job's cgroup, not the hierarchy's top:
    cbk reads the limit there (and above it, where the mount shows more)."""
    if layout == "subtree":   # the mount shows the job's cgroup and below it
        groups, expected_seen = {"step 0": limited(2048, 0), "": limited(768, 512)}, f"0::/{v2_group.name}/step 0"
    else:                     # the namespace's root is the step's cgroup, the container's own
        groups, expected_seen = {"": limited(768, 512)}, "0::/"
    seen, out = cbk_in(cbk_bin, v2_group, fake_tree(tmp_path / "fake", groups), tmp_path, *ARRAYS, layout=layout)
    assert seen == expected_seen
    assert refusal(out) == ("0.25", True), out


@pytest.mark.timeout(120)
def test_the_smaller_of_a_v1_and_a_v2_limit_holds(cbk_bin, v2_group, v1_memory_group, tmp_path):
    """A v1 memory limit (real, on a real v1 cgroup) below the v2 one wins, and the v2 one below v1's."""
    (v1_memory_group / "memory.limit_in_bytes").write_text(str(192 * MiB))
    fake = fake_tree(tmp_path / "fake", {"step 0": limited(2048, 0), "": UNLIMITED})
    _, out = cbk_in(cbk_bin, v2_group, fake, tmp_path, *ARRAYS, v1=v1_memory_group)
    shown, named = refusal(out)
    assert named and 0.1 <= float(shown) <= 0.19, out   # 192 MiB less the little cbk and sh have charged

    (v1_memory_group / "memory.limit_in_bytes").write_text(str(4096 * MiB))
    fake = fake_tree(tmp_path / "fake", {"step 0": limited(768, 512)})
    _, out = cbk_in(cbk_bin, v2_group, fake, tmp_path, *ARRAYS, v1=v1_memory_group)
    assert refusal(out) == ("0.25", True), out
