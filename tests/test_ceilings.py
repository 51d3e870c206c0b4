"""Which limit binds (docs/limits.md): pario and manyfiles records name
their directory, so the network-file-system checks reach them; a network
figure is checked against its own link or --link-speed, never another NIC;
the device and memory ceilings' arithmetic."""
from __future__ import annotations

import re

import pytest

from clusterbench import limits
from clusterbench.limits import ceilings
from clusterbench.results.sample import Sample


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
    r = cli("run", "tcp", "--role=loopback", "--port=0", "--duration=0.2", "--repeat", "1", "--label", "lo", "--quiet")
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


@pytest.mark.parametrize("share, above", [(1.03, False), (1.08, True)])
def test_the_warning_the_limit_column_and_the_mount_label_judge_the_link_alike(share, above):
    """One "faster than the link" rule (limits/thresholds.py RATE_SLACK): the
    stored warning, the limit column and the network-mount label once used
    1.0, 1.0 and 1.05, so a read at 103 % of its link was a cache in two of
    them and link-bound in the third."""
    from clusterbench.limits.netfs_limits import netfs_limit

    env = {"target./data.fs_type": "nfs4", "target./data.netfs.kind": "nfs",
           "target./data.netfs.link_rate_mbps": 1000, "net.eth0.speed_mbps": 1000}
    mib_s = share * 1e9 / 8 / 2**20
    read = _seqio("read", "cold", mib_s, cold_achieved=True)
    column = ceilings.binding(read, ceilings.Context(env))
    warned = any("faster than the fastest network link" in w for w in limits.sample_warnings(read, env))
    label = netfs_limit(env, "/data", mib_s * 2**20)
    assert (column.exceeded, warned, label == "client cache") == (above, above, above), (column, label)


def test_a_cold_read_is_warned_exactly_when_the_column_puts_it_above_the_device():
    """The cross-sample warning is the device ceiling's own sentence: one margin (CACHE_MARGIN)."""
    from dataclasses import replace

    direct = replace(_seqio("read", "direct", 1000.0), id=1)
    for sid, rate, above in ((2, 1150.0, False), (3, 1250.0, True)):
        cold = replace(_seqio("read", "cold", rate, cold_achieved=True), id=sid)
        warned = limits.cross_sample_warnings([direct, cold])
        column = ceilings.binding(cold, ceilings.Context({}, [direct]))
        assert column.exceeded == (sid in warned) == above
    assert warned[3] == ["cold read 1,250 MiB/s faster than the O_DIRECT read of the same directory (1,000 MiB/s): "
                         "readahead or a cache below the page cache (RAID controller, hypervisor, server) helped; "
                         "not a device figure"]


def test_random_io_over_a_network_mount_meets_the_link_by_the_bytes_each_operation_moved():
    """An IOPS figure had no rate unit, so randio over NFS was never checked
    against the link: 40,000 IOPS of 4 KiB (1.31 Gbit/s) through a 1 Gbit/s
    link was stored without a word."""
    env = {"target./data.fs_type": "nfs4", "target./data.netfs.kind": "nfs",
           "target./data.netfs.link_rate_mbps": 1000, "net.eth0.speed_mbps": 1000}

    def randread(iops: float) -> Sample:
        seconds = 2.0
        return Sample.from_record({"phase": "randread", "mode": "direct", "rate": iops, "rate_unit": "IOPS",
                                   "dir": "/data", "sweep_key": None, "qualifiers": [], "seconds": seconds,
                                   "ops": int(iops * seconds), "bytes": int(iops * seconds) * 4096})

    inside = ceilings.binding(randread(20_000), ceilings.Context(env))
    assert not inside.exceeded and inside.text == "link: 66 % of 1 Gbit/s", inside
    above = randread(40_000)
    assert ceilings.binding(above, ceilings.Context(env)).exceeded
    assert any("faster than the fastest network link" in w for w in limits.sample_warnings(above, env))
    # judged at a median, the median's data rate: operations times the bytes each moved
    assert ceilings.of_median(randread(40_000), 20_000, ceilings.Context(env)).text == "link: 66 % of 1 Gbit/s"
    # on a local disk, nothing to say about a link
    assert ceilings.binding(randread(40_000), ceilings.Context({"target./data.fs_type": "ext4"})) is None


@pytest.mark.timeout(120)
def test_a_read_of_several_files_is_judged_against_memory_by_all_of_them(cbk_bin, mpiexec, tmp_path):
    """The page-cache check took one file's size (file_bytes) for the data a
    read touched: manyfiles' 8 files of 512 KiB were "the data read (0 MiB)"
    and fitted in 3 MiB of free memory, pario's file per rank counted one rank's file."""
    import subprocess

    from clusterbench.results.records import parse_line

    def reads(cmd: list[str]) -> list[Sample]:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
        assert p.returncode == 0, p.stderr
        return [Sample.from_record(r) for line in p.stdout.splitlines()
                if (r := parse_line(line)) and r["type"] == "measurement" and r["phase"] == "read"]

    (many,) = reads([cbk_bin, "manyfiles", f"--dir={tmp_path}", "--files=8", "--file-size=512k", "--read=warm"])
    (split,) = reads([mpiexec, "-n", "2", cbk_bin, "pario", f"--dir={tmp_path}", "--strategy=split",
                      "--block-size=4m", "--transfer-size=1m", "--cold=none"])
    assert (many.record["files"], many.record["file_bytes"]) == (8, 512 * 1024)
    assert (split.record["files"], split.record["file_bytes"]) == (2, 4 * 2**20)
    assert (many.data_bytes, split.data_bytes) == (4 * 2**20, 8 * 2**20)
    plenty = {f"target.{tmp_path}.fs_type": "ext4", "memory.available_bytes": 64 * 2**30}
    assert [c.warning for c in ceilings.ceilings(many, ceilings.Context(plenty)) if c.name == "memory"] == [
        "likely cache effect: the data read (4 MiB) fits in free memory (64 GiB) and the read was not proven cold"]
    assert any("the data read (8 MiB) fits" in w for w in limits.sample_warnings(split, plenty))
    # 3 MiB free holds one 512 KiB file, not the 4 MiB read; 6 MiB one 4 MiB file, not the two
    assert ceilings.page_cache(many, ceilings.Context({**plenty, "memory.available_bytes": 3 * 2**20})) is None
    assert ceilings.page_cache(split, ceilings.Context({**plenty, "memory.available_bytes": 6 * 2**20})) is None


def test_the_page_cache_warning_names_small_sizes_in_their_own_unit():
    """The warning wrote the data in whole MiB and the memory in GiB to one
    decimal: a 256 KiB file under a 32 MiB --memory-limit read "the data read
    (0 MiB) fits in free memory (0.0 GiB)"."""
    warm = _seqio("read", "warm", 9000.0, file_bytes=256 * 1024)
    env = {"target./data.fs_type": "ext4", "memory.available_bytes": 20 * 2**30,
           "conditions.memory_limit_bytes": 32 * 2**20}
    assert limits.sample_warnings(warm, env) == [
        "likely cache effect: the data read (256 KiB) fits in free memory (32 MiB) and the read was not proven cold"]
    big = _seqio("read", "warm", 9000.0, file_bytes=3 * 2**29)
    assert limits.sample_warnings(big, {**env, "conditions.memory_limit_bytes": 2 * 2**30}) == [
        "likely cache effect: the data read (1.5 GiB) fits in free memory (2 GiB) and the read was not proven cold"]


@pytest.mark.parametrize("text, bits", [("1g", 1e9), ("10Gbit", 1e10), ("10GBit", 1e10), ("100Mbps", 1e8),
                                        ("1gb", 1e9), ("2.5 Gbit/s", 2.5e9), ("25", 25e9)])
def test_link_speed_reads_bits(text, bits):
    from clusterbench.commands.options import parse_link_speed
    assert parse_link_speed(text) == bits


@pytest.mark.parametrize("text", ["1GB", "1GB/s", "10GBps", "1 gbyte", "100MB"])
def test_link_speed_in_bytes_is_refused_not_read_as_bits(text):
    """1GB was read as 1 Gbit/s: a 1 GB/s link judged as an eighth of itself."""
    from clusterbench.commands.options import parse_link_speed
    from clusterbench.errors import BadInput
    with pytest.raises(BadInput, match="bits per second"):
        parse_link_speed(text)
