"""Which limit binds (docs/limits.md): pario and manyfiles records name
their directory, so the network-file-system checks reach them; a network
figure is checked against its own link or --link-speed, never another NIC;
the device and memory ceilings' arithmetic."""
from __future__ import annotations

import re

import pytest

from clusterbench import limits
from clusterbench.limits import ceilings
from clusterbench.sample import Sample


def stored_samples(store_url: str, label: str) -> tuple[list[Sample], dict]:
    from clusterbench.store import Store

    store = Store(store_url)
    run_id = store.resolve(label)[0]
    samples = [s for st in store.steps_of(run_id) for s in store.samples_of(st.id)]
    return samples, next(iter(store.environments_of(run_id).values()))


@pytest.mark.timeout(180)
def test_pario_and_manyfiles_reads_over_a_network_mount_meet_the_link(cli, store_url, tmp_path):
    """Real pario and manyfiles records: they name --dir, so when the
    environment says that directory is an NFS mount behind a 1 Gbit/s link,
    a read faster than the link is flagged; on the real (local) file system
    the link is not a ceiling of theirs."""
    for kernel, params in (("pario", ["--block-size=4m", "--transfer-size=1m"]),
                           ("manyfiles", ["--files=8", "--file-size=512k", "--read=warm"])):
        r = cli("run", kernel, f"--dir={tmp_path}", *params, "--repeat", "1", "--label", kernel, "--quiet")
        assert r.status == 0, r.stderr
        samples, env = stored_samples(store_url, kernel)
        reads = [s for s in samples if s.phase == "read" and s.unit == "MiB/s"]
        assert reads and all(s.directory == str(tmp_path) for s in samples if s.unit == "MiB/s"), kernel
        assert ceilings.link(reads[0], ceilings.Context(env)) is None  # local disk: no link below
        mounted = {**env, f"target.{tmp_path}.fs_type": "nfs4"}
        # a proven-cold rate that beats 1 Gbit/s (119 MiB/s) and one that does not, from the real record
        fast = Sample.from_record({**reads[0].record, "rate": 500.0, "cold_achieved": True})
        slow = Sample.from_record({**reads[0].record, "rate": 59.6, "cold_achieved": True})
        ctx = ceilings.Context(mounted, link_bits_per_s=1e9)
        assert ceilings.binding(fast, ctx).text == "cache: above the 1 Gbit/s link"
        assert ceilings.binding(slow, ctx).text == "link: 50 % of 1 Gbit/s"
        stored_with_link = {**mounted, "conditions.link_bits_per_s": 1e9}  # run --link-speed 1g
        assert any("faster than the fastest network link (1 Gbit/s)" in w
                   for w in limits.sample_warnings(fast, stored_with_link)), kernel


@pytest.mark.timeout(120)
def test_tcp_figure_meets_its_given_link_not_another_nic(cli, store_url):
    r = cli("run", "tcp", "--role=loopback", "--duration=0.2", "--repeat", "1", "--label", "lo", "--quiet")
    assert r.status == 0, r.stderr
    samples, env = stored_samples(store_url, "lo")
    assert samples and all(s.link_bits_per_s == 0.0 for s in samples)  # loopback: a network figure, rate unknown
    nic = {**env, "net.interfaces": "eth9", "net.eth9.speed_mbps": 1000}
    assert all(ceilings.link(s, ceilings.Context(nic)) is None for s in samples)  # another NIC says nothing
    show = cli("show", "lo", "--link-speed", "400g", "--width", "300")
    assert show.status == 0, show.stderr
    assert re.search(r"link: \d+ % of 400 Gbit/s", show.stdout), show.stdout
    bad = cli("show", "lo", "--link-speed", "fast")
    assert bad.status == 2 and "--link-speed fast" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def _seqio(phase: str, mode: str, rate: float, directory: str = "/data", **extra) -> Sample:
    return Sample.from_record({"phase": phase, "mode": mode, "rate": rate, "rate_unit": "MiB/s", "dir": directory,
                               "sweep_key": None, "qualifiers": [], **extra})


def test_device_and_memory_ceilings():
    direct = _seqio("read", "direct", 1000.0)
    ctx = ceilings.Context({"target./data.fs_type": "ext4"}, [direct])
    assert ceilings.binding(_seqio("read", "cold", 800.0, cold_achieved=True), ctx).text == \
        "device: 80 % of its direct rate"
    above = ceilings.binding(_seqio("read", "cold", 1500.0, cold_achieved=True), ctx)
    assert above.exceeded and above.text == "cache: above the device's direct rate" and above.short == "page cache"
    assert ceilings.binding(_seqio("read", "cold", 1150.0, cold_achieved=True), ctx).text == \
        "device: 115 % of its direct rate"  # within the 20 % readahead margin
    assert ceilings.binding(_seqio("read", "cold", 800.0, directory="/other", cold_achieved=True), ctx) is None
    # a warm read of a file that fits in memory is the page cache
    env = {"target./data.fs_type": "ext4", "memory.available_bytes": 8 * 2**30}
    warm = _seqio("read", "warm", 9000.0, file_bytes=2**30)
    assert ceilings.binding(warm, ceilings.Context(env)).text == "cache: the file fits in the page cache"
    assert ceilings.binding(warm, ceilings.Context({**env, "conditions.memory_limit_bytes": 2**29})) is None
    # tmpfs: memory, whatever the mode
    tmpfs = ceilings.binding(direct, ceilings.Context({"target./data.fs_type": "tmpfs"}))
    assert tmpfs.exceeded and tmpfs.text == "memory: tmpfs has no device below"
