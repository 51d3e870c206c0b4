"""Environment keys in words, as the reports name them where a key is shown
on its own (the keys that differ between nodes, a comparison's environment
differences, an imported file's stated facts): "GPU 1, PCIe link width
(now)", not `gpu.1.pcie_width_current`. The table is the one place that
names keys; a key it does not know is shown as stored, so a new collector's
key is never hidden. docs/environment.md says what each key holds.

A pattern's <name> stands for one part of a key that varies (a GPU's index,
an interface, a target directory) and is put into the words as it is."""
from __future__ import annotations

import functools
import re

# (key pattern, words); the first pattern that matches a key names it. More specific patterns first.
WORDS: tuple[tuple[str, str], ...] = (
    # an imported file's facts, named as the environment block names them (report_block.stated_by_file)
    ("os.kernel_name", "OS"),
    ("import.system", "System"),
    ("import.system_info", "System"),
    ("import.server", "Server"),
    ("import.client", "Client"),
    ("import.sender", "Sender"),
    # what every imported run stores of its file (importers/import_runs.py)
    ("import.source", "imported from"),
    ("import.file", "imported file"),
    ("import.tool_version", "imported tool's version"),
    ("host.name", "host name"),
    ("system.vendor", "system vendor"),
    ("system.product", "system product"),
    ("system.board_vendor", "board vendor"),
    ("system.board", "board"),
    ("system.bios_version", "BIOS version"),
    ("os.name", "OS name"),
    ("os.id", "OS id"),
    ("os.version_id", "OS version"),
    ("os.pretty_name", "OS"),
    ("os.kernel", "kernel"),
    ("kernel.release", "kernel release"),
    ("kernel.version", "kernel build"),
    ("kernel.cmdline", "kernel command line"),
    ("kernel.clocksource", "clock source"),
    ("tuned.profile", "tuned profile"),
    ("vm.dirty_ratio", "dirty pages, % of memory before writers block (vm.dirty_ratio)"),
    ("vm.dirty_background_ratio", "dirty pages, % of memory before write-back starts (vm.dirty_background_ratio)"),
    ("vm.dirty_bytes", "dirty pages, bytes before writers block (vm.dirty_bytes)"),
    ("vm.dirty_background_bytes", "dirty pages, bytes before write-back starts (vm.dirty_background_bytes)"),
    ("vm.swappiness", "swappiness"),
    ("kernel.shmmax", "shared memory segment size, maximum (kernel.shmmax)"),
    ("kernel.shmall", "shared memory pages, maximum (kernel.shmall)"),
    ("kernel.shmmni", "shared memory segments, maximum (kernel.shmmni)"),
    ("vm.zone_reclaim_mode", "NUMA zone reclaim mode"),
    ("thp.enabled", "transparent huge pages"),
    ("thp.defrag", "transparent huge pages, defrag"),
    ("cpu.model", "CPU model"),
    ("cpu.vendor", "CPU vendor"),
    ("cpu.isa_extensions", "CPU instruction set extensions"),
    ("cpu.hypervisor", "hypervisor"),
    ("cpu.threads", "CPU threads"),
    ("cpu.online", "CPUs online"),
    ("cpu.cgroup_cpus", "CPUs of the cgroup"),
    ("limits.locked_memory_bytes", "locked memory limit (ulimit -l)"),
    ("limits.stack_bytes", "stack size limit (ulimit -s)"),
    ("limits.open_files", "open files limit (ulimit -n)"),
    ("limits.address_space_bytes", "address space limit (ulimit -v)"),
    ("limits.data_bytes", "data size limit (ulimit -d)"),
    ("limits.file_size_bytes", "file size limit (ulimit -f)"),
    ("limits.cpu_seconds", "CPU time limit (ulimit -t)"),
    ("limits.core_file_bytes", "core file size limit (ulimit -c)"),
    ("cpu.cgroup_quota_cpus", "CPU time the cgroup allows, in CPUs (its CPU quota)"),
    ("cpu.sockets", "CPU sockets"),
    ("cpu.cores", "CPU cores"),
    ("cpu.threads_per_core", "threads per core"),
    ("cpu.smt_active", "SMT (hyper-threading) active"),
    ("cpu.isolated", "isolated CPUs"),
    ("cpu.freq_min_mhz", "CPU clock, minimum"),
    ("cpu.freq_max_mhz", "CPU clock, maximum"),
    ("cpu.freq_base_mhz", "CPU clock, base"),
    ("cpu.freq_cur_mhz", "CPU clock, now"),
    ("cpu.scaling_max_mhz", "CPU clock, scaling limit"),
    ("cpu.scaling_driver", "CPU frequency driver"),
    ("cpu.governor", "CPU frequency governor"),
    ("cpu.turbo", "CPU turbo"),
    ("cpu.idle_driver", "CPU idle driver"),
    ("cpu.idle_governor", "CPU idle governor"),
    ("cpu.idle_states", "CPU idle states"),
    ("memory.total_bytes", "memory"),
    ("memory.swap_total_bytes", "swap"),
    ("memory.hugepage_size_bytes", "huge page size"),
    ("memory.hugepages_total", "huge pages"),
    ("memory.dimm_slots", "DIMM slots"),
    ("memory.dimms_populated", "DIMMs populated"),
    ("memory.dimms", "DIMMs"),
    ("memory.dimm.<slot>", "DIMM <slot>"),
    ("memory.cgroup_limit_bytes", "memory limit of the cgroup"),
    ("numa.nodes", "NUMA nodes"),
    ("numa.node<n>.cpus", "NUMA node <n>, CPUs"),
    ("numa.node<n>.memory_bytes", "NUMA node <n>, memory"),
    ("numa.node<n>.distances", "NUMA node <n>, distances"),
    ("host_address.mtu", "MTU of the interface holding the node's address (its host name's)"),
    ("net.interfaces", "network interfaces"),
    ("net.<if>.speed_mbps", "network interface <if>, link speed"),
    ("net.<if>.mtu", "network interface <if>, MTU"),
    ("processes.busy", "processes keeping a CPU busy beside the job (runnable through the snapshot)"),
    ("net.<if>.operstate", "network interface <if>, state"),
    ("net.<if>.driver", "network interface <if>, driver"),
    ("net.<if>.pci_id", "network interface <if>, PCI id"),
    ("net.<if>.numa_node", "network interface <if>, NUMA node"),
    ("net.<if>.duplex", "network interface <if>, duplex"),
    ("net.<if>.offload.<feature>", "network interface <if>, offload <feature>"),
    ("net.<if>.coalesce.<setting>", "network interface <if>, interrupt coalescing <setting>"),
    ("net.<if>.ring_rx", "network interface <if>, receive ring"),
    ("net.<if>.ring_tx", "network interface <if>, send ring"),
    ("net.<if>.ring_rx_max", "network interface <if>, receive ring, maximum"),
    ("net.<if>.ring_tx_max", "network interface <if>, send ring, maximum"),
    ("sysctl.<name>", "sysctl <name>"),
    ("ib.hcas", "InfiniBand adapters"),
    ("ib.<hca>.hca_type", "InfiniBand <hca>, adapter type"),
    ("ib.<hca>.fw_ver", "InfiniBand <hca>, firmware"),
    ("ib.<hca>.board_id", "InfiniBand <hca>, board id"),
    ("ib.<hca>.<port>.rate", "InfiniBand <hca> port <port>, rate"),
    ("ib.<hca>.<port>.rate_gbps", "InfiniBand <hca> port <port>, rate (Gbit/s)"),
    ("ib.<hca>.<port>.state", "InfiniBand <hca> port <port>, state"),
    ("ib.<hca>.<port>.phys_state", "InfiniBand <hca> port <port>, physical state"),
    ("ib.<hca>.<port>.link_layer", "InfiniBand <hca> port <port>, link layer"),
    ("ib.<hca>.<port>.active_mtu", "InfiniBand <hca> port <port>, MTU"),
    ("mpi.mpiexec", "mpiexec"),
    ("mpi.mpiexec_version", "mpiexec version"),
    ("mpi.flavour", "MPI"),
    ("mpi.version", "MPI version"),
    ("mpi.mpicc_show", "mpicc command"),
    ("mpi.env.<var>", "MPI environment variable <var>"),
    ("threads.env.<var>", "threads environment variable <var>"),
    ("compiler.cc", "C compiler"),
    ("compiler.mpicc_compiler", "compiler under mpicc"),
    ("cbk", "cbk build (version, MPI, compiler)"),   # the cbk.* keys folded into one between nodes (analysis/cluster/cbk_fact.py)
    ("cbk.path", "cbk path"),
    ("cbk.version", "cbk version"),
    ("cbk.mpi", "cbk built with MPI"),
    ("cbk.mpi_library", "cbk's MPI library (loaded)"),
    ("cbk.mpi_built_with", "cbk's MPI (built with)"),
    ("cbk.compiler", "cbk compiler"),
    ("cbk.compiler_flags", "cbk compiler flags"),
    ("cbk.build_type", "cbk build type"),
    ("cbk.features", "cbk features"),
    ("python.version", "Python version"),
    ("python.implementation", "Python implementation"),
    ("clusterbench.version", "clusterbench version"),
    ("gpu.count", "GPUs"),
    ("gpu.source", "GPUs read by"),
    ("gpu.<i>.name", "GPU <i>, model"),
    ("gpu.<i>.driver_version", "GPU <i>, driver"),
    ("gpu.<i>.memory_mib", "GPU <i>, memory"),
    ("gpu.<i>.bus_id", "GPU <i>, bus id"),
    ("gpu.<i>.pcie_gen_current", "GPU <i>, PCIe generation (now)"),
    ("gpu.<i>.pcie_width_current", "GPU <i>, PCIe link width (now)"),
    ("gpu.<i>.pcie_gen", "GPU <i>, PCIe generation (maximum)"),
    ("gpu.<i>.pcie_width", "GPU <i>, PCIe link width (maximum)"),
    ("gpu.<i>.vbios_version", "GPU <i>, VBIOS"),
    ("gpu.<i>.numa_node", "GPU <i>, NUMA node"),
    ("gpu.<i>.local_cpus", "GPU <i>, local CPUs"),
    ("target.<dir>.mount_point", "<dir>, mount point"),
    ("target.<dir>.fs_type", "<dir>, file system"),
    ("target.<dir>.source", "<dir>, mounted from"),
    ("target.<dir>.mount_options", "<dir>, mount options"),
    ("target.<dir>.device", "<dir>, device"),
    ("target.<dir>.size_bytes", "<dir>, size"),
    ("target.<dir>.model", "<dir>, disk model"),
    ("target.<dir>.rotational", "<dir>, rotating disk"),
    ("target.<dir>.scheduler", "<dir>, I/O scheduler"),
    ("target.<dir>.read_ahead_kb", "<dir>, read-ahead"),
    ("target.<dir>.write_cache", "<dir>, write cache"),
    ("target.<dir>.disks", "<dir>, disks"),
    ("target.<dir>.raid_level", "<dir>, RAID level"),
    ("target.<dir>.netfs.kind", "<dir>, network file system"),
    ("target.<dir>.netfs.<setting>", "<dir>, network file system <setting>"),
    ("conditions.link_bits_per_s", "link speed given (--link-speed)"),
    ("conditions.memory_limit_bytes", "memory limit of the run (--memory-limit)"),
    ("conditions.setting.<name>.before", "setting <name> before the run"),
    ("conditions.setting.<name>", "setting <name> for the run (--setting)"),
    ("batchjob.system", "batch system"),
    ("batchjob.partition", "batch job, partition"),
    ("batchjob.queue", "batch job, queue"),
    ("batchjob.parallel_environment", "batch job, parallel environment"),
    ("batchjob.slots", "batch job, slots"),
    ("batchjob.nodes", "batch job, nodes"),
    ("batchjob.node_count", "batch job, node count"),
    ("batchjob.cpus_per_node", "batch job, CPUs per node"),
    ("batchjob.cpus_per_task", "batch job, CPUs per task"),
    ("batchjob.gpus", "batch job, GPUs"),
    ("batchjob.gpus_per_node", "batch job, GPUs per node"),
    ("batchjob.gpus_per_task", "batch job, GPUs per task"),
    # a topic none of whose facts was read (environment.COLLECTORS' topics): "batchjob collector, why not read"
    ("<topic>.collector", "<topic> collector"),
)

# a comparison of one target directory against another names each one's keys target.* and its path
# target.path (analysis/comparison.single_target), so two directories line up key by key
WORDS += (("target.path", "target directory"),
          *((pattern.replace("target.<dir>.", "target."), words.replace("<dir>", "target directory"))
            for pattern, words in WORDS if pattern.startswith("target.<dir>.")))


@functools.cache
def _compiled() -> tuple[tuple[re.Pattern, str], ...]:
    out = []
    for pattern, words in WORDS:
        # a placeholder is one or more characters; the literal parts around it are matched as written
        regex = re.sub(r"<(\w+)>", lambda m: f"(?P<{m.group(1)}>.+?)", re.escape(pattern).replace(r"\<", "<").replace(r"\>", ">"))
        out.append((re.compile(regex + r"\Z"), words))
    return tuple(out)


def key_words(key: str) -> str:
    """The key in words; KEY_error as why KEY was not read; an unknown key as stored."""
    if key.endswith("_error"):
        named = key_words(key[:-len("_error")])
        return key if named == key[:-len("_error")] else f"{named}, why not read"
    for regex, words in _compiled():
        m = regex.match(key)
        if m:
            return re.sub(r"<(\w+)>", lambda p: m.group(p.group(1)), words)
    return key
