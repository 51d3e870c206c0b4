"""Environment capture (E10): collectors on fixture trees (a fake /proc and
/sys), error keys instead of exceptions, hashing, diffs, the summary
block, and one real capture of this machine."""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clusterbench import environment
from clusterbench.environment import container, fabric, gpu, memory, modules, network, software, summary_block
from clusterbench.environment.sources import Context

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "environment"
COMMANDS = FIXTURES / "commands"
SRC = Path(__file__).resolve().parent.parent / "src"


def fixture_env(name: str, targets=()) -> dict:
    return environment.collect(targets, root=FIXTURES / name, run_commands=False)


def no_collector_errors(env: dict) -> None:
    assert [k for k in env if k.endswith(".collector_error")] == []


@pytest.mark.timeout(10)
def test_two_socket_xeon_with_hyperthreading_is_described_exactly():
    env = fixture_env("xeon2s_hdd")
    no_collector_errors(env)
    expected = {
        "host.name": "node01",
        "system.vendor": "Dell Inc.", "system.product": "PowerEdge R640", "system.board": "0H28RR",
        "cpu.model": "Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz", "cpu.vendor": "GenuineIntel",
        "cpu.sockets": 2, "cpu.cores": 4, "cpu.threads": 8, "cpu.threads_per_core": 2, "cpu.online": "0-7",
        "cpu.cgroup_cpus": "0-3,6",   # the cpuset cgroup of the capturing process (a Slurm job's), not every CPU online
        # the job's soft resource limits (/proc/self/limits): locked memory unlimited, as RDMA needs
        "limits.locked_memory_bytes": "unlimited", "limits.stack_bytes": "unlimited", "limits.open_files": 51200,
        "limits.core_file_bytes": 0, "limits.cpu_seconds": "unlimited", "limits.address_space_bytes": "unlimited",
        "limits.data_bytes": "unlimited", "limits.file_size_bytes": "unlimited",
        "cpu.smt_active": True, "cpu.hypervisor": False, "cpu.isa_extensions": "sse4_2 avx avx2 fma avx512f",
        "cpu.freq_min_mhz": 1000, "cpu.freq_base_mhz": 2300, "cpu.freq_max_mhz": 3700, "cpu.scaling_max_mhz": 3700,
        "cpu.freq_cur_mhz": 2950, "cpu.governor": "performance", "cpu.scaling_driver": "intel_pstate",
        "cpu.turbo": True, "cpu.idle_driver": "intel_idle", "cpu.idle_governor": "menu",
        "cpu.idle_states": "POLL, C1, C1E, C6",
        "memory.total_bytes": 196608000 * 1024, "memory.available_bytes": 185000000 * 1024,
        "memory.swap_total_bytes": 8388604 * 1024, "memory.hugepage_size_bytes": 2 << 20,
        "numa.nodes": 2, "numa.node0.cpus": "0-1,4-5", "numa.node1.cpus": "2-3,6-7",
        "numa.node0.memory_bytes": 98304000 * 1024, "numa.node1.distances": "21 10",
        "os.name": "Rocky Linux 8.9 (Green Obsidian)", "os.id": "rocky", "os.version_id": "8.9",
        "kernel.release": "4.18.0-513.5.1.el8_9.x86_64", "kernel.clocksource": "tsc",
        "tuned.profile": "balanced",
        "vm.dirty_ratio": 40, "vm.dirty_background_ratio": 10, "vm.dirty_bytes": 0,
        "vm.dirty_expire_centisecs": 3000, "vm.dirty_writeback_centisecs": 500,
        "thp.enabled": "always", "thp.defrag": "madvise",
        "system.boot_time": "2023-11-14T22:13:20+00:00", "system.load_1min": 0.5,
        "net.interfaces": "eno1 eno2", "net.eno1.speed_mbps": 10000, "net.eno1.mtu": 9000,
        "net.eno1.operstate": "up", "net.eno1.driver": "ixgbe", "net.eno1.pci_id": "8086:1563",
        "net.eno1.numa_node": 0, "ib.hcas": "",
        "gpu.count": 0, "gpu.source": "pci", "gpu.nvidia_device_files": 0,
    }
    assert {k: env.get(k) for k in expected} == expected
    # a link that is down reports no speed: an error key, not 0 and not -1
    assert "net.eno2.speed_mbps" not in env
    assert env["net.eno2.speed_mbps_error"] == "link speed not reported by the driver (-1 in /sys/class/net/eno2/speed)"


@pytest.mark.timeout(10)
def test_hdd_target_resolves_partition_to_its_disk():
    env = fixture_env("xeon2s_hdd", ["/data"])
    t = "target./data."
    assert {k[len(t):]: v for k, v in env.items() if k.startswith(t)} == {
        "mount_point": "/data", "fs_type": "xfs", "source": "/dev/sdb1",
        "mount_options": "rw,noatime,attr2,inode64,noquota",
        "device": "sdb1", "size_bytes": 7814000000 * 512, "disks": "sdb",
        "model": "ST4000NM0035-1V4107", "rotational": True, "scheduler": "bfq",
        "write_cache": "write through", "read_ahead_kb": 128,
    }


@pytest.mark.timeout(10)
def test_md_dm_and_network_targets():
    env = fixture_env("xeon2s_hdd", ["/scratch/job1", "/data/vm images/disk.qcow2", "/home/alice", "/srv"])
    # md RAID 1 over two SSDs: the members' queues are the ones that matter
    assert env["target./scratch/job1.device"] == "md0"
    assert env["target./scratch/job1.raid_level"] == "raid1"
    assert env["target./scratch/job1.disks"] == "sdc sdd"
    assert env["target./scratch/job1.model"] == "SAMSUNG MZ7L3960HCJR"
    assert env["target./scratch/job1.rotational"] is False
    assert env["target./scratch/job1.scheduler"] == "none"
    assert env["target./scratch/job1.read_ahead_kb"] == 8192
    # LVM volume on a partition, mounted at a path with a space (\040 in mountinfo),
    # nested inside /data: the longest mount point wins
    vm = "target./data/vm images/disk.qcow2."
    assert env[vm + "mount_point"] == "/data/vm images"
    assert env[vm + "device"] == "dm-0"
    assert env[vm + "dm_name"] == "vg0-images"
    assert env[vm + "disks"] == "sda"
    assert env[vm + "model"] == "INTEL SSDSC2KG480G8"
    # NFS: options include the superblock ones (vers=, rsize=), and no device is invented
    assert env["target./home/alice.fs_type"] == "nfs4"
    assert env["target./home/alice.mount_options"] == "rw,relatime,vers=4.2,rsize=1048576,wsize=1048576,proto=tcp"
    assert env["target./home/alice.device_error"] == ("nfs4 on nfs01:/export/home is not a local block device "
                                                      "(device 0:50 not in /sys/dev/block)")
    assert not any(k.startswith("target./home/alice.") and k.endswith((".model", ".rotational")) for k in env)
    # anything else is on the root file system
    assert env["target./srv.mount_point"] == "/"
    assert env["target./srv.device"] == "sda2"
    assert env["target./srv.rotational"] is False


@pytest.mark.timeout(10)
def test_infiniband_qdr_box():
    env = fixture_env("ib_qdr", ["/lustre/scratch/run1", "/tmp"])
    no_collector_errors(env)
    assert env["ib.hcas"] == "mlx4_0"
    assert env["ib.mlx4_0.1.rate"] == "40 Gb/sec (4X QDR)"
    assert env["ib.mlx4_0.1.rate_gbps"] == 40.0
    assert env["ib.mlx4_0.1.state"] == "ACTIVE"
    assert env["ib.mlx4_0.1.phys_state"] == "LinkUp"
    assert env["ib.mlx4_0.1.link_layer"] == "InfiniBand"
    assert env["ib.mlx4_0.2.rate_gbps"] == 10.0
    assert env["ib.mlx4_0.2.state"] == "DOWN"
    assert env["ib.mlx4_0.hca_type"] == "MT26428"
    assert env["ib.mlx4_0.fw_ver"] == "2.9.1000"
    assert env["ib.mlx4_0.1.active_mtu_error"].startswith("not run:")
    assert env["net.interfaces"] == "bond0 ib0"
    assert (env["net.ib0.speed_mbps"], env["net.ib0.mtu"], env["net.ib0.driver"]) == (40000, 65520, "mlx4_core")
    assert "net.ib0.numa_node" not in env  # -1: the platform does not say
    assert (env["net.bond0.bond_mode"], env["net.bond0.bond_slaves"]) == ("802.3ad", "eth0 eth1")
    # one socket, no SMT, acpi-cpufreq with mixed governors and boost
    assert (env["cpu.sockets"], env["cpu.cores"], env["cpu.threads"]) == (1, 4, 4)
    assert env["cpu.smt_active"] is False
    assert env["cpu.governor"] == "performance, ondemand"
    assert env["cpu.turbo"] is True
    assert "cpu.freq_base_mhz" not in env
    assert env["tuned.profile"] == "latency-performance"
    assert env["thp.enabled"] == "never"
    assert env["memory.hugepages_total"] == 16
    # Lustre: a network file system, no local block device
    assert env["target./lustre/scratch/run1.fs_type"] == "lustre"
    assert env["target./lustre/scratch/run1.source"] == "10.0.0.1@o2ib:/scratch"
    assert "target./lustre/scratch/run1.device_error" in env
    # NVMe partition: the model is the controller's
    assert env["target./tmp.device"] == "nvme0n1p2"
    assert env["target./tmp.disks"] == "nvme0n1"
    assert env["target./tmp.model"] == "SAMSUNG MZQL2960HCJR-00A07"
    # a GPU on the PCI bus without nvidia-smi: counted, not named
    assert (env["gpu.count"], env["gpu.source"], env["gpu.nvidia_device_files"]) == (1, "pci", 1)
    assert env["gpu.pci.0000:41:00.0"] == "NVIDIA"


@pytest.mark.timeout(10)
def test_missing_files_become_error_keys_without_exceptions():
    env = fixture_env("sparse", ["/data"])
    no_collector_errors(env)
    assert env["host.name"] == "bare"
    assert env["memory.total_bytes"] == 8000000 * 1024
    expected_errors = {
        "cpu.model_error": "no such file /proc/cpuinfo",
        "cpu.threads_error": "no such file /sys/devices/system/cpu/online",
        "cpu.governor_error": ("no cpufreq policy in /sys/devices/system/cpu/cpufreq (no cpufreq driver: "
                               "a virtual machine, or frequency scaling off)"),
        "cpu.idle_driver_error": ("no /sys/devices/system/cpu/cpuidle (no cpuidle driver: the CPUs idle as the "
                                  "kernel's default)"),
        "memory.available_bytes_error": "no MemAvailable line in /proc/meminfo",
        "numa.nodes_error": "no node directories in /sys/devices/system/node (kernel without NUMA support)",
        "os.name_error": "no such file /etc/os-release or /usr/lib/os-release",
        "kernel.release_error": "no such file /proc/sys/kernel/osrelease",
        "tuned.profile_error": "no such file /etc/tuned/active_profile",
        "vm.dirty_ratio_error": "no such file /proc/sys/vm/dirty_ratio",
        "thp.enabled_error": "no such file /sys/kernel/mm/transparent_hugepage/enabled",
        "target./data.fs_type_error": "no such file /proc/self/mountinfo",
        "net.interfaces_error": "no such file /sys/class/net",
        "gpu.count_error": "no such file /sys/bus/pci/devices (no PCI bus visible)",
    }
    assert {k: env.get(k) for k in expected_errors} == expected_errors
    # no guesses: nothing that could not be read has a value
    for key in expected_errors:
        assert key.removesuffix("_error") not in env
    assert env["memory.dimms_error"] == "not run: command execution disabled (dmidecode)"
    lines = dict(summary_block(env))
    assert lines["CPU"] == "unavailable: no such file /proc/cpuinfo"
    assert lines["Tuned profile"] == "unavailable: no such file /etc/tuned/active_profile"


@pytest.mark.timeout(10)
def test_a_collector_that_breaks_costs_only_its_own_keys(monkeypatch):
    from clusterbench.environment import cpu

    def broken(env, ctx):
        env["cpu.model"] = "partial"
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cpu, "collect", broken)
    env = fixture_env("xeon2s_hdd")
    assert env["cpu.collector_error"] == "ZeroDivisionError: division by zero"
    assert env["cpu.model"] == "partial"
    assert env["memory.total_bytes"] == 196608000 * 1024


def _copy(name: str, dest: Path) -> Path:
    root = dest / name
    shutil.copytree(FIXTURES / name, root, symlinks=True)
    return root


@pytest.mark.timeout(20)
@pytest.mark.parametrize("content", ["garbage", "", "-5", "[x] y", "0-99999999999", "\x00\xff"])
def test_garbage_in_every_file_gives_error_keys_not_exceptions(tmp_path, content):
    root = _copy("xeon2s_hdd", tmp_path)
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            p.write_bytes(content.encode("latin-1") + b"\n")
    env = environment.collect(["/data", "/scratch"], root=root, run_commands=False)
    no_collector_errors(env)
    assert "cpu.threads" not in env and "cpu.threads_error" in env
    assert "tuned.profile" in env or "tuned.profile_error" in env
    summary_block(env)


@pytest.mark.timeout(10)
def test_diff_shows_only_the_tuned_profile_line(tmp_path):
    a_root, b_root = _copy("xeon2s_hdd", tmp_path / "a"), _copy("xeon2s_hdd", tmp_path / "b")
    (b_root / "etc/tuned/active_profile").write_text("latency-performance\n")
    # volatile facts differ too: free memory, load, current clock, boot time
    meminfo = b_root / "proc/meminfo"
    meminfo.write_text(meminfo.read_text().replace("185000000", "1000"))
    (b_root / "proc/loadavg").write_text("7.00 7.00 7.00 9/500 1\n")
    (b_root / "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq").write_text("1200000\n")
    (b_root / "proc/stat").write_text("btime 1710000000\n")
    a = environment.collect(["/data"], root=a_root, run_commands=False)
    b = environment.collect(["/data"], root=b_root, run_commands=False)
    assert a["memory.available_bytes"] != b["memory.available_bytes"]
    assert environment.diff(a, b) == [("tuned.profile", "balanced", "latency-performance")]
    assert environment.diff(a, a) == []


@pytest.mark.timeout(10)
def test_diff_lists_keys_present_on_one_side_sorted(tmp_path):
    a_root, b_root = _copy("xeon2s_hdd", tmp_path / "a"), _copy("xeon2s_hdd", tmp_path / "b")
    (b_root / "etc/tuned/active_profile").unlink()
    (b_root / "proc/sys/vm/dirty_ratio").write_text("10\n")
    a = environment.collect(root=a_root, run_commands=False)
    b = environment.collect(root=b_root, run_commands=False)
    assert environment.diff(a, b) == [
        ("tuned.profile", "balanced", None),
        ("tuned.profile_error", None, "no such file /etc/tuned/active_profile"),
        ("vm.dirty_ratio", 40, 10),
    ]


@pytest.mark.timeout(10)
def test_hash_is_stable_and_ignores_volatile_keys(tmp_path):
    first = fixture_env("xeon2s_hdd", ["/data"])
    second = fixture_env("xeon2s_hdd", ["/data"])
    h = environment.snapshot_hash(first)
    assert re.fullmatch(r"[0-9a-f]{64}", h)
    assert environment.snapshot_hash(second) == h
    # a snapshot read back from the store (JSON) hashes the same
    assert environment.snapshot_hash(json.loads(json.dumps(first))) == h
    # key order does not matter
    assert environment.snapshot_hash(dict(reversed(list(first.items())))) == h
    volatile = dict(first, **{"capture.time": "2030-01-01T00:00:00+00:00", "capture.seconds": 9.9,
                              "memory.available_bytes": 1, "memory.free_bytes": 1, "cpu.freq_cur_mhz": 800,
                              "system.load_1min": 99.0, "system.boot_time": "2030-01-01T00:00:00+00:00"})
    assert environment.snapshot_hash(volatile) == h
    assert environment.snapshot_hash(dict(first, **{"tuned.profile": "throughput-performance"})) != h
    assert environment.snapshot_hash(fixture_env("ib_qdr", ["/data"])) != h


@pytest.mark.timeout(10)
def test_summary_block_reads_like_a_test_environment_list():
    env = fixture_env("xeon2s_hdd", ["/data"])
    lines = summary_block(env)
    items = [k for k, _ in lines]
    assert items[:7] == ["Host", "CPU", "CPU clock", "CPU idle", "Memory", "NUMA", "OS"]
    d = dict(lines)
    assert d["Host"] == "node01 (Dell Inc. PowerEdge R640, board 0H28RR)"
    assert d["CPU"] == "2 x Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz, 4 cores / 8 threads"
    assert d["CPU clock"] == ("min 1,000 MHz, base 2,300 MHz, max 3,700 MHz; governor performance (intel_pstate); "
                              "turbo on")
    assert d["CPU idle"] == "intel_idle (governor menu; states POLL, C1, C1E, C6)"
    assert "CPU idle" not in dict(summary_block(fixture_env("sparse")))  # a snapshot without the keys
    vm = dict(fixture_env("xeon2s_hdd"), **{"cpu.idle_driver": "haltpoll", "cpu.idle_governor": "haltpoll",
                                            "cpu.idle_states": "POLL, haltpoll idle", "cpu.idle_halt_poll_ns": 0})
    assert dict(summary_block(vm))["CPU idle"] == ("haltpoll (governor haltpoll; states POLL, haltpoll idle; "
                                                   "guest halt poll 0 ns: every idle is a halt)")
    assert d["Memory"].startswith("187.5 GiB; DIMM layout unavailable: not run: ")
    assert d["NUMA"] == "2 nodes; node0: cpus 0-1,4-5 (93.8 GiB); node1: cpus 2-3,6-7 (93.8 GiB)"
    assert d["OS"] == "Rocky Linux 8.9 (Green Obsidian), kernel 4.18.0-513.5.1.el8_9.x86_64"
    assert d["Target /data"] == (
        "xfs on /dev/sdb1 mounted at /data (rw,noatime,attr2,inode64,noquota); device sdb1, 3.6 TiB; "
        "disk(s) sdb: model ST4000NM0035-1V4107, rotational, scheduler bfq, write cache write through, "
        "read-ahead 128 KiB")
    assert d["NIC eno1"] == "10,000 Mbit/s, MTU 9000, up, driver ixgbe"
    assert d["Tuned profile"] == "balanced"
    # the sysctls in words: "dirty_ratio=40 ... dirty_expire_centisecs=3000" in a customer's table
    assert d["Dirty page write-back"] == ("writers throttled at 40 % of memory dirty, background write-back from "
                                          "10 % of memory, dirty pages written back after 30 s, checked every 5 s")
    byte_limit = dict(fixture_env("xeon2s_hdd"), **{"vm.dirty_bytes": 268435456, "vm.dirty_ratio": 0})
    assert dict(summary_block(byte_limit))["Dirty page write-back"].startswith("writers throttled at 256 MiB dirty, ")
    assert d["Transparent huge pages"] == "enabled always, defrag madvise"
    assert "MPI" in d and "Compiler" in d and "GPUs" in d
    ib = dict(summary_block(fixture_env("ib_qdr")))
    assert ib["IB mlx4_0 port 1"] == "40 Gb/sec (4X QDR), ACTIVE, InfiniBand, MT26428 MT_0D90110009 fw 2.9.1000"
    assert ib["CPU clock"] == "min 1,500 MHz, max 3,000 MHz; governor performance, ondemand (acpi-cpufreq); turbo on"


@pytest.mark.timeout(10)
def test_dimm_layout_from_dmidecode_output():
    keys = memory.dimm_keys(memory.parse_dmidecode_memory((COMMANDS / "dmidecode-memory.txt").read_text()))
    assert keys == {
        "memory.dimm_slots": 4, "memory.dimms_populated": 2,
        "memory.dimms": "2 x 32 GiB DDR4 2666 MT/s (rated 2933 MT/s)",
        "memory.dimm.A1": "32 GiB DDR4 2666 MT/s (rated 2933 MT/s), 00AD00B300AD HMA84GR7CJR4N-WM",
        "memory.dimm.A2": "empty",
        "memory.dimm.B1": "32 GiB DDR4 2666 MT/s (rated 2933 MT/s), 00AD00B300AD HMA84GR7CJR4N-WM",
        "memory.dimm.B2": "empty",
    }
    env = dict(fixture_env("sparse"), **keys)
    assert dict(summary_block(env))["Memory"] == "7.6 GiB; 2 x 32 GiB DDR4 2666 MT/s (rated 2933 MT/s) in 4 slots"


@pytest.mark.timeout(10)
def test_command_outputs_are_parsed():
    versions = {f: software.parse_mpiexec_version((COMMANDS / f"mpiexec-{f}.txt").read_text())
                for f in ("mpich", "openmpi", "intel")}
    assert versions == {"mpich": ("MPICH", "4.1.2"), "openmpi": ("Open MPI", "4.1.5"),
                        "intel": ("Intel MPI", "2021.10 build 20230619")}
    with pytest.raises(ValueError):
        software.parse_mpiexec_version("srun: slurm 23.02.6\n")
    assert network.parse_ibv_devinfo_mtu((COMMANDS / "ibv_devinfo.txt").read_text()) == {
        ("mlx4_0", "1"): 4096, ("mlx4_0", "2"): 2048}
    gpus = gpu.nvidia_keys(gpu.parse_nvidia_smi((COMMANDS / "nvidia-smi.csv").read_text()))
    assert gpus == {"gpu.count": 2, "gpu.source": "nvidia-smi",
                    **{f"gpu.{i}.{k}": v for i in (0, 1) for k, v in (
                        ("name", "NVIDIA A100-SXM4-40GB"), ("driver_version", "535.104.05"),
                        ("memory_mib", 40960), ("pcie_gen", 4), ("pcie_width", 16), ("pcie_width_current", 16),
                        ("vbios_version", "92.00.45.00.03"))},
                    "gpu.0.bus_id": "0000:07:00.0", "gpu.1.bus_id": "0000:0b:00.0",
                    # GPU 1's link idles at gen 1 (power saving): current and max differ
                    "gpu.0.pcie_gen_current": 4, "gpu.1.pcie_gen_current": 1}
    assert dict(summary_block(gpus))["GPUs"] == "2 x NVIDIA A100-SXM4-40GB (40,960 MiB, driver 535.104.05)"


@pytest.mark.timeout(10)
def test_mpi_tuning_variables_kept_and_launcher_internals_left_out():
    environ = {"UCX_TLS": "rc,sm", "FI_PROVIDER": "verbs", "MPIR_CVAR_ASYNC_PROGRESS": "1",
               "OMPI_MCA_btl": "^openib", "OMPI_MCA_ess_base_jobid": "1234", "OMPI_MCA_orte_hnp_uri": "x",
               "I_MPI_PIN_DOMAIN": "core", "PATH": "/usr/bin", "HOME": "/root",
               "MPICH_OFI_NIC_POLICY": "NUMA", "NCCL_IB_HCA": "mlx5_0"}
    assert software.mpi_env(environ) == {
        "mpi.env.FI_PROVIDER": "verbs", "mpi.env.I_MPI_PIN_DOMAIN": "core",
        "mpi.env.MPICH_OFI_NIC_POLICY": "NUMA", "mpi.env.NCCL_IB_HCA": "mlx5_0",
        "mpi.env.MPIR_CVAR_ASYNC_PROGRESS": "1", "mpi.env.OMPI_MCA_btl": "^openib", "mpi.env.UCX_TLS": "rc,sm"}


@pytest.mark.timeout(10)
def test_openmp_and_blas_thread_variables_kept():
    # one node's profile exporting OMP_NUM_THREADS=1 runs every user's OpenMP code there on one core;
    # cbk sets its own thread count, so only the snapshot can show it
    environ = {"OMP_NUM_THREADS": "1", "OMP_PROC_BIND": "close", "KMP_AFFINITY": "compact", "GOMP_SPINCOUNT": "0",
               "OPENBLAS_NUM_THREADS": "4", "MKL_NUM_THREADS": "2", "OMPI_MCA_btl": "tcp", "HOME": "/root"}
    assert software.thread_env(environ) == {
        "threads.env.GOMP_SPINCOUNT": "0", "threads.env.KMP_AFFINITY": "compact", "threads.env.MKL_NUM_THREADS": "2",
        "threads.env.OMP_NUM_THREADS": "1", "threads.env.OMP_PROC_BIND": "close",
        "threads.env.OPENBLAS_NUM_THREADS": "4"}


def _cgroup_tree(root: Path, mountinfo: str, proc_cgroup: str, files: dict[str, str]) -> Context:
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text(mountinfo)
    (root / "proc/self/cgroup").write_text(proc_cgroup)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return Context(root=root)


@pytest.mark.timeout(10)
def test_memory_cgroup_limit_is_the_tightest_over_the_jobs_cgroup_and_those_above(tmp_path):
    from clusterbench.environment import memory_cgroup

    # v2: a Slurm job's cgroup (8 GiB) inside its step's (unlimited) inside a user slice (4 GiB): 4 GiB binds
    v2 = _cgroup_tree(tmp_path / "v2", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                      "0::/user.slice/job_42/step_0\n",
                      {"sys/fs/cgroup/cgroup.controllers": "cpu memory pids\n",
                       "sys/fs/cgroup/user.slice/memory.max": f"{4 << 30}\n",
                       "sys/fs/cgroup/user.slice/job_42/memory.max": f"{8 << 30}\n",
                       "sys/fs/cgroup/user.slice/job_42/step_0/memory.max": "max\n"})
    env: dict = {}
    memory_cgroup.collect_into(env, v2)
    assert env == {"memory.cgroup_limit_bytes": 4 << 30}
    # v1 (a hybrid host: cgroup2 mounted without the memory controller): memory.stat sums the hierarchy
    v1 = _cgroup_tree(tmp_path / "v1", "30 1 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
                      "31 1 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
                      "4:memory:/job_7\n0::/\n",
                      {"sys/fs/cgroup/unified/cgroup.controllers": "\n",
                       "sys/fs/cgroup/memory/job_7/memory.stat": f"cache 0\nhierarchical_memory_limit {300 << 20}\n"})
    env = {}
    memory_cgroup.collect_into(env, v1)
    assert env == {"memory.cgroup_limit_bytes": 300 << 20}
    # no limit anywhere: said, so a node with one differs from it
    free = _cgroup_tree(tmp_path / "free", "31 1 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
                        "4:memory:/\n", {"sys/fs/cgroup/memory/memory.stat":
                                          "hierarchical_memory_limit 9223372036854771712\n"})
    env = {}
    memory_cgroup.collect_into(env, free)
    assert env == {"memory.cgroup_limit_bytes": "none"}
    # a container in a private cgroup namespace: /proc/self/cgroup says "0::/", the host's mount is
    # listed first with its root seen as "/../..", the container's own mount holds its 2 GiB at its root
    ns = _cgroup_tree(tmp_path / "ns", "30 1 0:26 /../.. /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
                      "40 30 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n",
                      {"sys/fs/cgroup/cgroup.controllers": "memory pids\n",
                       "sys/fs/cgroup/memory.max": f"{2 << 30}\n"})
    env = {}
    memory_cgroup.collect_into(env, ns)
    assert env == {"memory.cgroup_limit_bytes": 2 << 30}
    env = {}
    memory_cgroup.collect_into(env, Context(root=tmp_path / "nothing"))
    assert "memory.cgroup_limit_bytes_error" in env and "/proc/self/mountinfo" in env["memory.cgroup_limit_bytes_error"]


@pytest.mark.timeout(10)
def test_a_cgroup_cpu_quota_is_recorded_in_cpus_the_tightest_over_the_levels(tmp_path):
    """A node whose jobs run under a CPU quota (a container's --cpus, a slice's CPUQuota=) has every
    CPU online and in its cpuset: only the quota says why its figures fall."""
    from clusterbench.environment.cpu import collect

    # v2: a container's limit of 1.5 CPUs (150 ms a 100 ms period) above its job's 4: 1.5 binds
    v2 = _cgroup_tree(tmp_path / "v2", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                      "0::/kubepods/pod1/job\n",
                      {"sys/fs/cgroup/cgroup.controllers": "cpuset cpu memory\n",
                       "sys/fs/cgroup/kubepods/cpu.max": "max 100000\n",
                       "sys/fs/cgroup/kubepods/pod1/cpu.max": "150000 100000\n",
                       "sys/fs/cgroup/kubepods/pod1/job/cpu.max": "400000 100000\n"})
    env: dict = {}
    collect(env, v2)
    assert env["cpu.cgroup_quota_cpus"] == 1.5, env
    # v1 (a hybrid host, as this VM): the cpu cgroup's own CFS quota over its period, 15 % of a CPU
    v1 = _cgroup_tree(tmp_path / "v1", "30 1 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
                      "31 1 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
                      "3:cpu:/slow\n0::/\n",
                      {"sys/fs/cgroup/unified/cgroup.controllers": "\n",
                       "sys/fs/cgroup/cpu/slow/cpu.cfs_quota_us": "1500\n",
                       "sys/fs/cgroup/cpu/slow/cpu.cfs_period_us": "10000\n"})
    env = {}
    collect(env, v1)
    assert env["cpu.cgroup_quota_cpus"] == 0.15, env
    # no quota: said, so a node with one differs from it
    free = _cgroup_tree(tmp_path / "free", "31 1 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
                        "3:cpu:/\n", {"sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
                                       "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"})
    env = {}
    collect(env, free)
    assert env["cpu.cgroup_quota_cpus"] == "none", env
    env = {}
    collect(env, Context(root=tmp_path / "nothing"))
    assert "cpu.cgroup_quota_cpus_error" in env and "/proc/self/mountinfo" in env["cpu.cgroup_quota_cpus_error"]


@pytest.mark.timeout(10)
def test_cpuset_cgroup_cpus_are_the_nearest_levels_that_has_them(tmp_path):
    from clusterbench.environment import cpuset_cgroup

    # v2: cpuset enabled down to the job's cgroup (its CPUs 2-3), not in its step's: the job's binds
    v2 = _cgroup_tree(tmp_path / "v2", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                      "0::/system.slice/slurmstepd.scope/job_42/step_0\n",
                      {"sys/fs/cgroup/cgroup.controllers": "cpuset cpu memory pids\n",
                       "sys/fs/cgroup/cpuset.cpus.effective": "0-7\n",
                       "sys/fs/cgroup/system.slice/slurmstepd.scope/job_42/cpuset.cpus.effective": "2,3\n"})
    env: dict = {}
    cpuset_cgroup.collect_into(env, v2)
    assert env == {"cpu.cgroup_cpus": "2-3"}
    # a hybrid host (cgroup2 mounted without cpuset, as this VM's): v1's effective_cpus
    v1 = _cgroup_tree(tmp_path / "v1", "30 1 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
                      "31 1 0:27 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n",
                      "5:cpuset:/docker/abc\n0::/\n",
                      {"sys/fs/cgroup/unified/cgroup.controllers": "\n",
                       "sys/fs/cgroup/cpuset/docker/abc/cpuset.cpus": "0-3\n",
                       "sys/fs/cgroup/cpuset/docker/abc/cpuset.effective_cpus": "1\n"})
    env = {}
    cpuset_cgroup.collect_into(env, v1)
    assert env == {"cpu.cgroup_cpus": "1"}
    # no cpuset hierarchy at all: said, not guessed
    none = _cgroup_tree(tmp_path / "none", "31 1 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
                        "4:memory:/\n", {})
    env = {}
    cpuset_cgroup.collect_into(env, none)
    assert list(env) == ["cpu.cgroup_cpus_error"] and "no cpuset cgroup" in env["cpu.cgroup_cpus_error"]


@pytest.mark.timeout(60)
def test_a_collector_bound_to_one_cpu_still_records_the_cpus_the_node_gives_jobs():
    """Open MPI binds a one-process launch (a node's snapshot) to one core: read from the process's
    affinity, every node of an Open MPI cluster run gave jobs one CPU, and the scaling step placed one
    rank per node where it meant all cores."""
    if len(os.sched_getaffinity(0)) < 2 or not shutil.which("taskset"):
        pytest.skip("needs two CPUs and taskset")
    code = ("from clusterbench.environment import cpuset_cgroup; from clusterbench.environment.sources import "
            "Context; import os; e = {}; cpuset_cgroup.collect_into(e, Context()); "
            "print(e.get('cpu.cgroup_cpus'), len(os.sched_getaffinity(0)))")
    free = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50)
    bound = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=50)
    assert free.returncode == 0 and bound.returncode == 0, free.stderr + bound.stderr
    (cpus, n_free), (cpus_bound, n_bound) = free.stdout.split(), bound.stdout.split()
    assert n_bound == "1" and int(n_free) >= 2   # the binding took
    assert cpus != "None" and cpus_bound == cpus


@pytest.mark.timeout(30)
def test_real_capture_of_this_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("UCX_TLS", "self,sm")
    env = environment.collect([str(tmp_path)])
    no_collector_errors(env)
    assert isinstance(env["cpu.model"], str) and env["cpu.model"]
    assert env["cpu.threads"] == os.cpu_count()  # online CPUs, as sysconf counts them
    with open("/proc/meminfo") as f:
        total_kib = int(f.readline().split()[1])
    assert env["memory.total_bytes"] == total_kib * 1024
    assert env["kernel.release"] == os.uname().release
    assert env["host.name"] == os.uname().nodename
    findmnt = shutil.which("findmnt")
    expected_fs = subprocess.run([findmnt, "-n", "-o", "FSTYPE", "--target", str(tmp_path)], capture_output=True,
                                 text=True, check=True).stdout.strip() if findmnt else "ext4"
    assert env[f"target.{tmp_path}.fs_type"] == expected_fs
    assert env["mpi.env.UCX_TLS"] == "self,sm"
    idle = Path("/sys/devices/system/cpu/cpuidle/current_driver")
    if idle.exists():
        assert env["cpu.idle_driver"] == idle.read_text().strip()
    cc = shutil.which("cc")
    if cc:
        first = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        assert env["compiler.cc"] == first.strip()
    assert env["python.version"] == ".".join(map(str, sys.version_info[:3]))
    # well under a command timeout: nothing hung
    assert env["capture.seconds"] < 3.0
    assert all(isinstance(v, (str, int, float, bool)) for v in env.values())
    summary_block(env)  # renders without error on a real snapshot


@pytest.mark.timeout(30)
def test_no_command_runs_when_disabled():
    env = environment.collect([], run_commands=False)
    assert env["mpi.flavour_error"] == "not run: command execution disabled (mpiexec)"
    assert env["compiler.cc_error"] == "not run: command execution disabled (cc)"
    assert "cpu.model" in env and "memory.total_bytes" in env


@pytest.mark.timeout(30)
def test_module_entry_prints_json_for_compute_nodes(tmp_path):
    envvars = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-m", "clusterbench.environment", "--target", str(tmp_path)],
                       capture_output=True, text=True, env=envvars, timeout=25)
    assert p.returncode == 0, p.stderr
    env = json.loads(p.stdout)
    assert env["capture.schema"] == 1
    assert f"target.{tmp_path}.fs_type" in env
    p = subprocess.run([sys.executable, "-m", "clusterbench.environment", "--root", str(FIXTURES / "ib_qdr"),
                        "--summary"], capture_output=True, text=True, env=envvars, timeout=25)
    assert p.returncode == 0, p.stderr
    assert "IB mlx4_0 port 1" in p.stdout and "40 Gb/sec (4X QDR)" in p.stdout


@pytest.mark.timeout(30)
def test_cbk_build_is_read_from_its_self_description(tmp_path, monkeypatch):
    pytest.importorskip("clusterbench.catalogue", reason="the cbk lookup lives in clusterbench.catalogue")
    fake = tmp_path / "cbk"
    fake.write_text("#!/bin/sh\necho '" + json.dumps({
        "schema": 1, "type": "describe", "cbk_version": "9.9.9", "mpi": True,
        "mpi_library": "Open MPI v4.1.5", "compiler": "gcc 12.2.0", "kernels": []}) + "'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CLUSTERBENCH_CBK", str(fake))
    env = environment.collect([])
    assert (env["cbk.path"], env["cbk.version"], env["cbk.mpi"], env["cbk.mpi_library"], env["cbk.compiler"]) == (
        str(fake), "9.9.9", True, "Open MPI v4.1.5", "gcc 12.2.0")
    assert env["cbk.compiler_flags_error"] == f"not in {fake} --describe (every run record of cbk states it)"
    assert env["cbk.features_error"] == f"not in {fake} --describe (cbk predates it)"
    # the optional parts built in, one line env --diff compares
    fake.write_text("#!/bin/sh\necho '" + json.dumps({
        "schema": 1, "type": "describe", "cbk_version": "9.9.9", "mpi": False, "kernels": [],
        "features": {"openmp": True, "liburing": False, "libaio": True, "cuda": False}}) + "'\n")
    env = environment.collect([])
    assert env["cbk.features"] == "libaio, openmp"
    monkeypatch.setenv("CLUSTERBENCH_CBK", str(tmp_path / "missing-cbk"))
    env = environment.collect([])
    assert "cbk.version" not in env and env["cbk.version_error"]


@pytest.mark.timeout(10)
def test_os_errors_become_reasons_a_person_can_act_on():
    from clusterbench.environment.sources import _os_error_reason

    assert _os_error_reason(OSError(errno.EACCES, "x"), "/etc/tuned/active_profile") == \
        "permission denied: /etc/tuned/active_profile"
    # sysfs answers EINVAL for the speed of a link that is down
    assert _os_error_reason(OSError(errno.EINVAL, "x"), "/sys/class/net/eth1/speed") == \
        "not reported by the driver (invalid argument): /sys/class/net/eth1/speed"


@pytest.mark.timeout(10)
@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_says_permission_denied(tmp_path):
    root = _copy("ib_qdr", tmp_path)
    (root / "etc/tuned/active_profile").chmod(0)
    env = environment.collect(root=root, run_commands=False)
    assert env["tuned.profile_error"] == "permission denied: /etc/tuned/active_profile"


def _documented_form(key: str) -> str:
    """A key with its variable parts as written in docs/environment.md."""
    key = key.removesuffix("_error")
    for pattern, repl in ((r"^target\..*?\.netfs\.", "target.<dir>.netfs."),
                          (r"^target\.(?!<dir>\.netfs\.).*\.([a-z_]+)$", r"target.<dir>.\1"),
                          (r"^net\.(?!interfaces)[^.]+\.", "net.<if>."),
                          (r"^ib\.(?!hcas)[^.]+\.\d+\.", "ib.<hca>.<port>."),
                          (r"^ib\.(?!hcas)[^.]+\.(?!<)", "ib.<hca>."),
                          (r"^numa\.node\d+\.", "numa.node<N>."),
                          (r"^gpu\.\d+\.", "gpu.<i>."),
                          (r"^gpu\.pci\..*", "gpu.pci.<address>"),
                          (r"^memory\.dimm\..*", "memory.dimm.<slot>"),
                          (r"^mpi\.env\..*", "mpi.env.<VAR>"),
                          (r"^threads\.env\..*", "threads.env.<VAR>")):
        key = re.sub(pattern, repl, key)
    return key


@pytest.mark.timeout(30)
def test_every_key_is_documented(tmp_path):
    keys = set(environment.collect([str(tmp_path)]))
    for name in ("xeon2s_hdd", "ib_qdr", "sparse"):
        keys |= set(fixture_env(name, ["/data", "/scratch", "/data/vm images/x", "/home"]))
    keys |= set(fixture_env("netfs", ["/home/a", "/nfsrdma/b", "/lustre/c", "/mnt/gluster/d"]))
    keys |= set(gpu.nvidia_keys(gpu.parse_nvidia_smi((COMMANDS / "nvidia-smi.csv").read_text())))
    keys |= set(gpu.rocm_keys((COMMANDS / "rocm-smi.json").read_text()))
    keys |= set(gpu.pci_keys(Context(_gpu_tree(tmp_path)), "0", "0000:c1:00.0", {}))
    keys |= {"gpu.rocm_query", "container.image", "container.engine", "container.evidence", "modules.system",
             "modules.files", "modules.path", "modules.count", "gpu.0.local_cpus"}
    keys |= set(memory.dimm_keys(memory.parse_dmidecode_memory((COMMANDS / "dmidecode-memory.txt").read_text())))
    doc = (Path(__file__).resolve().parent.parent / "docs" / "environment.md").read_text()
    documented = set(re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", doc, flags=re.S)))
    # gpu.query_error and gpu.rocm_query_error have no value twin
    forms = {_documented_form(k) for k in keys} - {"gpu.query", "gpu.rocm_query"}
    assert sorted(f for f in forms if f not in documented) == []
    assert "gpu.query_error" in documented
    for k in environment.VOLATILE_KEYS:
        assert f"`{k}`" in doc


def _gpu_tree(root: Path) -> Path:
    """A PCI device directory as sysfs shows an MI210: NUMA node, near CPUs, links."""
    dev = root / "gputree" / "sys/bus/pci/devices/0000:c1:00.0"
    dev.mkdir(parents=True, exist_ok=True)
    for name, text in (("numa_node", "3\n"), ("local_cpulist", "48-63\n"), ("max_link_speed", "16.0 GT/s PCIe\n"),
                       ("max_link_width", "16\n"), ("current_link_speed", "16.0 GT/s PCIe\n"),
                       ("current_link_width", "8\n")):
        (dev / name).write_text(text)
    return root / "gputree"


@pytest.mark.timeout(10)
def test_rocm_smi_gpus_get_their_numa_node_and_pcie_link_from_sysfs(tmp_path):
    # rocm-smi.json is the layout of rocm-smi 6.x --json (written for this test, not captured on an MI210)
    keys = gpu.rocm_keys((COMMANDS / "rocm-smi.json").read_text())
    assert keys == {"gpu.count": 2, "gpu.source": "rocm-smi",
                    "gpu.0.name": "AMD Instinct MI210", "gpu.1.name": "AMD Instinct MI210",
                    "gpu.0.driver_version": "6.3.6", "gpu.1.driver_version": "6.3.6",
                    "gpu.0.bus_id": "0000:c1:00.0", "gpu.1.bus_id": "0000:81:00.0",
                    "gpu.0.memory_mib": 65520, "gpu.1.memory_mib": 65520}
    ctx = Context(_gpu_tree(tmp_path))
    gpu.add_pci_keys(keys, ctx)
    assert {k: v for k, v in keys.items() if k.startswith("gpu.0.")} == {
        "gpu.0.name": "AMD Instinct MI210", "gpu.0.driver_version": "6.3.6", "gpu.0.bus_id": "0000:c1:00.0",
        "gpu.0.memory_mib": 65520, "gpu.0.numa_node": 3, "gpu.0.local_cpus": "48-63",
        # a x16 card in a x8 slot shows as width 8: the number that halves its copy bandwidth
        "gpu.0.pcie_gen": 4, "gpu.0.pcie_width": 16, "gpu.0.pcie_gen_current": 4, "gpu.0.pcie_width_current": 8}
    assert keys["gpu.1.numa_node_error"] == "no such file /sys/bus/pci/devices/0000:81:00.0"
    # nvidia-smi's link figures are kept; sysfs adds only NUMA node and near CPUs
    nv = gpu.nvidia_keys(gpu.parse_nvidia_smi((COMMANDS / "nvidia-smi.csv").read_text()))
    assert gpu.pci_keys(ctx, "0", "0000:c1:00.0", nv | {"gpu.0.pcie_width_current": 16}).keys() == {
        "gpu.0.numa_node", "gpu.0.local_cpus"}


@pytest.mark.timeout(10)
def test_a_platform_without_numa_information_is_said_so(tmp_path):
    root = _gpu_tree(tmp_path)
    (root / "sys/bus/pci/devices/0000:c1:00.0/numa_node").write_text("-1\n")
    (root / "sys/bus/pci/devices/0000:c1:00.0/max_link_speed").write_text("Unknown\n")
    out = gpu.pci_keys(Context(root), "0", "0000:c1:00.0", {})
    assert out["gpu.0.numa_node_error"] == ("the platform states no NUMA node "
                                            "(/sys/bus/pci/devices/0000:c1:00.0/numa_node is -1)")
    assert out["gpu.0.pcie_gen_error"] == "unexpected value 'Unknown' in /sys/bus/pci/devices/0000:c1:00.0/max_link_speed"
    assert gpu.nvidia_keys([{"index": "0", "name": "Tesla T4", "driver_version": "535.1", "memory_mib": "15360",
                             "pcie_gen": "3", "pcie_width": "16", "bus_id": "00000000:3B:00.0",
                             "pcie_gen_current": "[N/A]", "pcie_width_current": "16"}])[
        "gpu.0.pcie_gen_current_error"] == "nvidia-smi reports [N/A] for pcie_gen_current"


@pytest.mark.timeout(10)
def test_loaded_modules_of_lmod_and_environment_modules():
    assert modules.module_keys({"LMOD_VERSION": "8.6.19", "LOADEDMODULES": "gcc/12.2:openmpi/4.1.5",
                                "_LMFILES_": "/mf/gcc/12.2.lua:/mf/openmpi/4.1.5.lua", "MODULEPATH": "/mf",
                                "LMOD_CMD": "/usr/share/lmod/lmod/libexec/lmod"}) == {
        "modules.system": "Lmod 8.6.19", "modules.loaded": "gcc/12.2 openmpi/4.1.5", "modules.count": 2,
        "modules.files": "/mf/gcc/12.2.lua /mf/openmpi/4.1.5.lua", "modules.path": "/mf"}
    assert modules.module_keys({"MODULES_CMD": "/usr/lib/modulecmd.tcl", "MODULESHOME": "/usr/share/modules"}) == {
        "modules.system": "Environment Modules", "modules.loaded": "", "modules.count": 0}
    assert modules.module_keys({"PATH": "/usr/bin"}) == {"modules.loaded_error": (
        "no module system in this environment (LOADEDMODULES, LMOD_CMD, MODULESHOME, MODULES_CMD unset)")}


@pytest.mark.timeout(10)
def test_container_runtimes_are_told_by_their_markers(tmp_path):
    root = tmp_path / "c"
    (root / "run").mkdir(parents=True)
    assert container.detect(Context(root), {}) == {"container.runtime": "none"}
    assert container.detect(Context(root), {"APPTAINER_CONTAINER": "/images/lammps.sif"}) == {
        "container.runtime": "apptainer", "container.image": "/images/lammps.sif",
        "container.evidence": "$APPTAINER_CONTAINER"}
    (root / ".dockerenv").write_text("")
    assert container.detect(Context(root), {})["container.runtime"] == "docker"
    (root / "run/.containerenv").write_text('engine="podman-4.3.1"\nname="bench"\nimage="docker.io/library/'
                                           'debian:12"\nrootless=1\n')
    assert container.detect(Context(root), {}) == {
        "container.runtime": "podman", "container.evidence": "/run/.containerenv",
        "container.engine": "podman-4.3.1", "container.image": "docker.io/library/debian:12"}
    (root / "run/.containerenv").unlink()
    (root / ".dockerenv").unlink()
    (root / "proc/1").mkdir(parents=True)
    (root / "proc/1/cgroup").write_text("0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-ab12.scope\n")
    assert container.detect(Context(root), {}) == {"container.runtime": "kubernetes",
                                                    "container.evidence": "/proc/1/cgroup names kubepods"}


@pytest.mark.timeout(30)
def test_fabric_library_versions_from_the_real_tools():
    assert fabric.libfabric_version("fi_info: 1.17.0\nlibfabric: 1.17.0\nlibfabric api: 1.17\n") == "1.17.0"
    assert fabric.ucx_version("# Version 1.13.1\n# Git branch '<unknown>', revision 0000000\n") == "1.13.1"
    assert fabric.ucx_version("# Library version: 1.16.0\n# Library path: /usr/lib/libucs.so.0\n") == "1.16.0"
    assert fabric.ofed_version("MLNX_OFED_LINUX-5.8-1.0.1.1:\n") == "MLNX_OFED_LINUX-5.8-1.0.1.1"
    env = environment.collect([])
    for key, tool in (("fabric.libfabric_version", "fi_info"), ("fabric.ucx_version", "ucx_info")):
        if shutil.which(tool):  # libfabric-bin and ucx-utils (scripts/apt-packages-test.txt)
            assert re.fullmatch(r"\d+\.\d+\.\d+", str(env[key])), env.get(key + "_error")
        else:
            assert env[key + "_error"] == f"{tool} not installed (not on PATH)"
    assert env["fabric.ofed_version_error"] == "ofed_info not installed (not on PATH)" or env["fabric.ofed_version"]


@pytest.mark.timeout(10)
def test_the_granted_gpus_are_part_of_the_environment():
    assert gpu.grant_keys({"SGE_HGR_gpu": "2 3"}) == {"gpu.granted": "2 3", "gpu.granted_source": "SGE_HGR_gpu"}
    assert gpu.grant_keys({"SGE_HGR_gpu": "two"})["gpu.granted_error"].startswith("SGE_HGR_gpu='two' is not a list")
    assert gpu.grant_keys({})["gpu.granted_error"].startswith("no grant in the environment")


@pytest.mark.timeout(60)
def test_a_node_whose_tcp_stack_missed_the_tuning_differs_in_those_keys_alone(tmp_path):
    """#40's mis-tuned node, in a network namespace of its own (a test host is one):
    its snapshot differs from a healthy one in the sysctl.net.* keys it changed."""
    import shutil
    import subprocess
    import sys

    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a network namespace")
    code = ("import json, sys; from clusterbench import environment; "
            "e = environment.collect(run_commands=False); "
            "print(json.dumps({k: v for k, v in e.items() if k.startswith('sysctl.')}))")
    mistune = ("echo '4096 8192 16384' > /proc/sys/net/ipv4/tcp_rmem; "
               "echo '4096 8192 16384' > /proc/sys/net/ipv4/tcp_wmem; "
               "echo reno > /proc/sys/net/ipv4/tcp_congestion_control; ")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    snaps = []
    for prep in ("", mistune):
        p = subprocess.run(["unshare", "--net", "sh", "-c", f'{prep}exec "$0" -c "$1"', sys.executable, code],
                           capture_output=True, text=True, timeout=50, env=env)
        assert p.returncode == 0, p.stderr
        snaps.append(json.loads(p.stdout))
    healthy, tuned_wrong = snaps
    differ = {k for k in healthy if healthy[k] != tuned_wrong.get(k)}
    assert differ == {"sysctl.net.ipv4.tcp_rmem", "sysctl.net.ipv4.tcp_wmem",
                      "sysctl.net.ipv4.tcp_congestion_control"}, (healthy, tuned_wrong)
    assert tuned_wrong["sysctl.net.ipv4.tcp_rmem"] == "4096 8192 16384"
    assert tuned_wrong["sysctl.net.ipv4.tcp_congestion_control"] == "reno"


@pytest.mark.timeout(60)
def test_env_diff_of_runs_on_different_host_counts_shows_every_host(cli, store_url, tmp_path):
    from clusterbench.store.opening import open_store

    base = fixture_env("xeon2s_hdd")
    store = open_store(store_url, writing=True)

    def run_on(label, hosts):
        run_id = store.begin_run(label=label, command="test", suite=None)
        for host, profile in hosts.items():
            env = dict(base, **{"host.name": host, "tuned.profile": profile})
            store.link_host(run_id, host, store.add_environment(env, environment.snapshot_hash(env)))
        store.finish_run(run_id, "ok")

    run_on("one", {"h01": "balanced"})
    run_on("two", {"h01": "balanced", "h02": "latency-performance"})
    for a, b in (("one", "two"), ("two", "one")):
        out = cli("env", "--diff", a, b)
        assert out.status == 0, out.stderr
        # h02, the host whose tuned profile differs, is compared too, not left out
        assert "(h02)" in out.stdout and "latency-performance" in out.stdout, out.stdout
    # RUN@ with no host after it was taken as the whole run: the user meant one host and named none
    out = cli("env", "--diff", "two@", "one")
    assert out.status == 2 and "two@: no host after '@' (hosts of run 2: h01, h02)" in out.stderr, out.stderr
    assert cli("env", "--diff", "two@h02", "one").status == 0


def runs_on_n01(store_url: str, key: str, value_by_label: dict[str, str]) -> None:
    """One ok run a label on host n01, its snapshot the xeon2s_hdd fixture's with key set to the value."""
    from clusterbench.store.opening import open_store

    store = open_store(store_url, writing=True)
    for label, value in value_by_label.items():
        env = dict(fixture_env("xeon2s_hdd"), **{"host.name": "n01", key: value})
        run_id = store.begin_run(label=label, command="test", suite=None)
        store.link_host(run_id, "n01", store.add_environment(env, environment.snapshot_hash(env)))
        store.finish_run(run_id, "ok")


@pytest.mark.timeout(60)
def test_env_diff_with_an_imported_run_folds_what_its_file_did_not_record_and_prints_values_as_written(
        cli, store_url):
    """Against an imported run, every key its file did not state was a line
    of its own (about 150); and a value holding rich markup ("[/]", from a
    kernel command line or a host's file) ended the diff in a traceback."""
    runs_on_n01(store_url, "kernel.cmdline", {"measured": "ro quiet [/] x", "again": "ro [bold]y"})
    out = cli("env", "--diff", "measured", "again")
    assert out.status == 0 and "ro quiet [/] x" in out.stdout and "ro [bold]y" in out.stdout, out.stdout + out.stderr
    osu = FIXTURES.parent / "import" / "osu-7.4-bw.txt"
    assert cli("import", "--host", "n01", "--label", "old", str(osu)).status == 0
    out = cli("env", "--diff", "measured", "old")
    assert out.status == 0, out.stderr
    rows = [ln for ln in out.stdout.splitlines() if ln.startswith("│")]
    # keys, not terminal lines: a key named in words takes two (the words, the key under them)
    assert int(re.search(r"environment differences: (\d+) lines?", out.stdout)[1]) <= 5, out.stdout
    assert re.search(r"\(\d{2,} more keys\) .*imported from OSU 7.4 text: not recorded", rows[-1]), rows[-1]
    both = cli("env", "--diff", "measured", "measured")
    assert both.status == 0 and "environment differences: 0 lines" in both.stdout


@pytest.mark.timeout(60)
def test_env_diff_json_prints_the_diff_as_json_and_target_is_refused(cli, store_url, tmp_path):
    """`env --diff A B --json` printed the table, its --json dropped without a word (a script's
    `| jq` failed on box characters); --target beside --diff was dropped too."""
    import json

    runs_on_n01(store_url, "tuned.profile", {"a": "balanced", "b": "latency-performance"})
    out = cli("env", "--diff", "a", "b", "--json")
    assert out.status == 0, out.stderr
    (pair,) = json.loads(out.stdout)
    assert pair["a"] == {"run": 1, "host": "n01"} and pair["b"] == {"run": 2, "host": "n01"}
    assert pair["differences"] == [{"key": "tuned.profile", "a": "balanced", "b": "latency-performance"}]
    assert pair["not_recorded"] is None
    osu = FIXTURES.parent / "import" / "osu-7.4-bw.txt"
    assert cli("import", "--host", "n01", "--label", "old", str(osu)).status == 0
    (pair,) = json.loads(cli("env", "--diff", "a", "old", "--json").stdout)
    assert pair["not_recorded"]["keys"] > 10 and pair["not_recorded"]["a"] is None
    assert pair["not_recorded"]["b"] == "imported from OSU 7.4 text: not recorded"
    out = cli("env", "--diff", "a", "b", "--target", str(tmp_path))
    assert out.status == 2 and "--target" in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.timeout(120)
def test_an_environment_diff_says_each_value_with_its_unit_where_a_report_reader_sees_it(cli, store_url, tmp_path):
    """E10: the comparison's environment table, in the terminal, the HTML
    report, compare's Markdown and env --diff, printed target.size_bytes as
    274877906944 and target.rotational as True: a number a customer counts
    the digits of, a Python word. JSON keeps the stored value."""
    import json

    from clusterbench.store.opening import open_store

    store = open_store(store_url, writing=True)
    base = fixture_env("xeon2s_hdd")
    for label, size, rotational, ahead in (("hdd", 274877906944, True, 8192), ("ssd", 25274793984, False, 128)):
        env = dict(base, **{"host.name": "n01", "target./data.size_bytes": size, "target./data.rotational": rotational,
                            "target./data.read_ahead_kb": ahead, "target./data.fs_type": "ext4"})
        run_id = store.begin_run(label=label, command="test", suite=None)
        store.link_host(run_id, "n01", store.add_environment(env, environment.snapshot_hash(env)))
        step = store.begin_step(run_id, position=0, name="null", kernel="null", params={}, launcher="local", ranks=1,
                                ranks_per_node=None)
        for i in range(3):
            store.add_sample(step, {"repetition": i, "phase": "run", "mode": "n/a", "rate": 1.0 + i, "rate_unit": "s"},
                             [])
        store.finish_step(step, "ok")
        store.finish_run(run_id, "ok")
    # one target directory against another: its keys are target.*, named in words (environment/key_words.py)
    want = {"target directory, size": ("256 GiB", "23.5 GiB (25,274,793,984 bytes)"),
            "target directory, rotating disk": ("yes", "no"), "target directory, read-ahead": ("8,192 KiB", "128 KiB")}

    def rows(text: str, sep: str) -> dict[str, list[str]]:
        out = {}
        for line in text.splitlines():
            cells = [c.strip() for c in line.split(sep)[1:-1]]
            if len(cells) == 3 and cells[0] in want:
                out[cells[0]] = cells[1:]
        return out

    for args, sep in ((("compare", "hdd", "ssd", "--width", "200"), "│"), (("env", "--diff", "hdd", "ssd"), "│"),
                      (("compare", "hdd", "ssd", "--format", "md"), "|")):
        r = cli(*args)
        assert r.status == 0, r.stderr
        assert {k: tuple(v) for k, v in rows(r.stdout, sep).items()} == want, (args, r.stdout)
    out = tmp_path / "r.html"
    assert cli("report", "hdd", "ssd", "-o", str(out)).status == 0
    page = out.read_text()
    for key, (a, b) in want.items():
        assert f"<tr><td>{key}</td><td>{a}</td><td>{b}</td></tr>" in page, key
    lines = json.loads(cli("compare", "hdd", "ssd", "--format", "json").stdout)["environment_differences"][0]["lines"]
    assert {"key": "target.size_bytes", "base": 274877906944, "other": 25274793984} in lines


@pytest.mark.timeout(60)
def test_env_diff_folds_a_long_path_and_never_cuts_it(cli, store_url):
    """`env --diff 4 5` printed target.model_error's path as
    "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/device/mo…":
    the file a reader would look for, cut short."""
    from clusterbench.store.opening import open_store

    store = open_store(store_url, writing=True)
    path = "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/device/model-of-a-long-named-disk"
    for label, extra in (("a", {"target./data.model_error": f"no such file {path}"}), ("b", {})):
        env = dict(fixture_env("xeon2s_hdd"), **{"host.name": "n01"}, **extra)
        run_id = store.begin_run(label=label, command="test", suite=None)
        store.link_host(run_id, "n01", store.add_environment(env, environment.snapshot_hash(env)))
        store.finish_run(run_id, "ok")
    for width in ("80", "120", "160"):
        out = cli("env", "--diff", "a", "b", "--width", width).stdout
        assert "…" not in out, out
        cells = "".join(line.split("│")[2].strip() for line in out.splitlines()
                        if line.startswith("│") and len(line.split("│")) > 3)
        assert path in cells, (width, out)


@pytest.mark.timeout(60)
def test_env_diff_names_each_key_in_words_and_keeps_the_stored_key_under_it(cli, store_url):
    """env --diff listed the raw keys ("target./data.fs_type") where every report names them in words;
    the words come first now, the stored key on the line below (people grep for it)."""
    from clusterbench.environment.key_words import key_words
    from clusterbench.store.opening import open_store

    store = open_store(store_url, writing=True)
    for label, profile, cmdline in (("a", "balanced", "ro quiet"), ("b", "latency-performance", "ro")):
        env = dict(fixture_env("xeon2s_hdd"), **{"host.name": "n01", "tuned.profile": profile,
                                                  "kernel.cmdline": cmdline, "zz.unnamed": label})
        run_id = store.begin_run(label=label, command="test", suite=None)
        store.link_host(run_id, "n01", store.add_environment(env, environment.snapshot_hash(env)))
        store.finish_run(run_id, "ok")
    out = cli("env", "--diff", "a", "b", "--width", "200")
    assert out.status == 0, out.stderr
    cells = [[c.strip() for c in ln.split("│")[1:-1]] for ln in out.stdout.splitlines() if ln.startswith("│")]
    first = [c[0] for c in cells]
    for key in ("tuned.profile", "kernel.cmdline"):
        words = key_words(key)
        assert words != key
        i = first.index(words)
        assert first[i + 1] == key and cells[i + 1][1:] == ["", ""], out.stdout   # the key, alone, below
    assert first.count("zz.unnamed") == 1   # a key with no words: as stored, once


@pytest.mark.timeout(60)
def test_env_diff_of_two_imported_runs_lists_what_the_files_state_not_what_neither_recorded(cli, store_url):
    """Two imported runs of different formats: each key neither file stated
    was a line of its own ("imported from OSU 7.4 text: not recorded"
    against "imported from iperf3 3.12 JSON: not recorded", 26 of the 31
    lines), burying the lines where the files differ."""
    imports = FIXTURES.parent / "import"
    assert cli("import", "--label", "osu", str(imports / "osu-7.4-bw.txt")).status == 0
    assert cli("import", "--label", "iperf", str(imports / "iperf3-3.12-tcp.json")).status == 0
    out = cli("env", "--diff", "osu", "iperf")
    assert out.status == 0, out.stderr
    rows = [ln for ln in out.stdout.splitlines() if ln.startswith("│")]
    # what a file stated stays: the host, the files, their formats, iperf3's system line
    for stated in ("import.file", "OSU 7.4 text", "iperf3 3.12 JSON", "Linux vm"):
        assert stated in out.stdout, out.stdout
    assert "_error" not in out.stdout, out.stdout
    assert re.search(r"\(\d{2,} more keys\) .*imported from OSU 7.4 text: not recorded .*imported from iperf3 "
                     r"3.12 JSON: not recorded", rows[-1]), rows[-1]
    assert int(re.search(r"environment differences: (\d+) lines?", out.stdout)[1]) <= 11, out.stdout


def test_the_batch_job_is_described_as_the_scheduler_states_it():
    """A run's snapshot said nothing of its job (only runs.batch_job's id): not
    the partition or queue, the nodes, nor the CPUs and GPUs it was given.
    The variables below are the forms sites' jobs carry."""
    from clusterbench.environment import batchjob

    slurm = {"SLURM_JOB_ID": "7001", "SLURM_ARRAY_JOB_ID": "7000", "SLURM_ARRAY_TASK_ID": "3",
             "SLURM_JOB_PARTITION": "gpu", "SLURM_JOB_NODELIST": "rack1-n[001-002],rack2-n[003],a[1-2]b[3-4]",
             "SLURM_JOB_NUM_NODES": "7", "SLURM_JOB_CPUS_PER_NODE": "2(x3),1", "SLURM_TASKS_PER_NODE": "2(x3),1",
             "SLURM_CPUS_PER_TASK": "4", "SLURM_GPUS_PER_TASK": "a100:1", "SLURM_CPUS_ON_NODE": "1"}
    assert batchjob.keys(slurm) == {
        "batchjob.system": "slurm", "batchjob.partition": "gpu",
        "batchjob.nodes": "rack1-n[001-002],rack2-n[003],a[1-2]b[3-4]", "batchjob.node_count": 7,
        "batchjob.cpus_per_node": "2(x3),1", "batchjob.cpus_per_task": 4,
        "batchjob.gpus_per_task": "a100:1"}
    # a per-node form that is one number stays text, as in every other job
    assert batchjob.keys({"SLURM_JOB_ID": "1", "SLURM_JOB_CPUS_PER_NODE": "2"})["batchjob.cpus_per_node"] == "2"
    sge = {"JOB_ID": "5678", "SGE_ROOT": "/opt/sge", "SGE_TASK_ID": "undefined", "QUEUE": "all.q", "PE": "mpi",
           "NSLOTS": "6", "NHOSTS": "2", "PE_HOSTFILE": "/opt/sge/default/spool/n01/active_jobs/5678.1/pe_hostfile"}
    assert batchjob.keys(sge) == {
        "batchjob.system": "sge", "batchjob.queue": "all.q", "batchjob.parallel_environment": "mpi",
        "batchjob.slots": 6, "batchjob.node_count": 2}
    assert batchjob.keys({"JOB_ID": "5"}) == {}   # JOB_ID alone is no Grid Engine job
    # in the report's environment block, one line
    env = {**batchjob.keys(slurm), "host.name": "n01"}
    assert ("Batch job", "slurm, partition gpu, nodes 7, on rack1-n[001-002],rack2-n[003],a[1-2]b[3-4], "
                         "CPUs per node 2(x3),1, CPUs per task 4, GPUs per task a100:1") \
        in summary_block(env)
    assert not [k for k, _ in summary_block({"host.name": "n01"}) if k == "Batch job"]


def test_a_process_kept_busy_beside_the_capture_is_named_and_its_own_commands_are_not():
    """processes.busy (busy_processes.py): a busy loop not started by the capture (detached, as a
    neighbour's) is named, however little CPU it gets on a loaded machine (it is runnable at every
    sample); a sleeping process is not, nor a busy loop the capturing process started itself (the
    other collectors' commands)."""
    from clusterbench.environment import busy_processes

    loop = "while :; do :; done"
    # started through a shell that exits at once: the loop's parent is then no kin of this process
    neighbour = int(subprocess.run(["sh", "-c", f"sh -c '{loop}' >/dev/null 2>&1 & echo $!"], capture_output=True,
                                   text=True, check=True).stdout)
    own = subprocess.Popen(["sh", "-c", loop])
    sleeper = int(subprocess.run(["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"], capture_output=True,
                                 text=True, check=True).stdout)
    try:
        env: dict = {}
        busy_processes.collect(env, Context(sample_processes=True))
    finally:
        for pid in (neighbour, sleeper):
            os.kill(pid, 9)
        own.kill()
        own.wait()
    said = env[busy_processes.KEY]
    assert re.search(rf"\bsh \(pid {neighbour}, \d+ % of a CPU\)", said), said
    assert f"pid {own.pid}," not in said and f"pid {sleeper}," not in said, said
    assert environment.is_volatile(busy_processes.KEY)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("second", [False, True], ids=["first-address", "second-address"])
def test_the_mtu_is_found_where_the_host_name_is_an_interfaces_second_address(tmp_path, second):
    """SIOCGIFADDR answers an interface's primary address alone: a host name on the second address of its
    interface (a cluster address beside a management one) had no MTU, 'no interface holds' it. A network,
    mount and host-name namespace of its own: a veth at MTU 1280 with 198.18.77.1 and .2, the name on one."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("needs root, unshare and ip for a network namespace")
    hosts = tmp_path / "hosts"
    hosts.write_text(f"127.0.0.1 localhost\n198.18.77.{2 if second else 1} probe-host\n")
    code = ("import json; from clusterbench.environment import host_address; "
            "from clusterbench.environment.sources import Context; "
            "env = {}; host_address.collect(env, Context()); print(json.dumps(env))")
    prep = (f"mount --bind {hosts} /etc/hosts && hostname probe-host && "
            "ip link add v0 type veth peer name v1 && ip link set v0 mtu 1280 up && ip link set v1 up && "
            "ip addr add 198.18.77.1/24 dev v0 && ip addr add 198.18.77.2/24 dev v0 && ")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run(["unshare", "--net", "--mount", "--uts", "sh", "-c", f'{prep}exec "$0" -c "$1"',
                        sys.executable, code], capture_output=True, text=True, timeout=50, env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"host_address.mtu": 1280}


def test_a_busy_process_started_after_the_first_sample_is_given_its_share_not_0():
    """The share was taken between the first and the last sample: a busy loop that started after the first
    (runnable at the other 9 of 10) read '0 % of a CPU' beside being named busy. Samples as /proc gives them:
    pid -> (name, state, parent, CPU ticks), 10 of them over 0.45 s at 100 ticks a second."""
    from clusterbench.environment import busy_processes

    samples = [{"1": ("init", "S", 0, 7)} | ({"500": ("spin", "R", 1, 40 + 5 * i)} if i else {}) for i in range(10)]
    said = busy_processes.busy_text(samples, "9999", "net:[1]", lambda pid: "net:[1]", 0.45, 100)
    assert said == "spin (pid 500, 100 % of a CPU)"


def test_a_busy_neighbour_named_to_fool_the_reader_is_named_as_it_named_itself():
    """A process may name itself anything but NUL (/proc/PID/comm): ')' and ' R 1 (' are /proc/PID/stat's own
    separators, a newline split the key's line, and a '%' in the name was rewritten to ' %'."""
    from clusterbench.environment import busy_processes

    name = "a%b) R 1 (\nz"
    spin = f"open('/proc/self/comm', 'w').write({name!r})\nwhile True: pass"
    pid = int(subprocess.run(["sh", "-c", f'"{sys.executable}" -c "$0" >/dev/null 2>&1 & echo $!', spin],
                             capture_output=True, text=True, check=True).stdout)
    try:
        while Path(f"/proc/{pid}/comm").read_text() != name + "\n":
            pass   # the interpreter has not yet named itself
        env: dict = {}
        busy_processes.collect(env, Context(sample_processes=True))
    finally:
        os.kill(pid, 9)
    said = env[busy_processes.KEY]
    assert re.search(rf"(^|, )a%b\) R 1 \(\\nz \(pid {pid}, \d+ % of a CPU\)", said), said
    assert "\n" not in said
