"""The "test environment" block of a benchmark report (E10), from a
snapshot: one (item, text) pair per line, in the order articles use.
A value that was not readable is shown as "unavailable: reason"."""
from __future__ import annotations

from collections import Counter

from clusterbench.output.counted_text import counted
from clusterbench.results.sizes import rounded_size_text


def _why(env: dict, key: str) -> str:
    reason = env.get(key + "_error")
    return f"unavailable: {reason}" if reason else "unavailable"


def _join(parts: list[str]) -> str:
    """Items joined by ", ", but by "; " after an unavailable one: its reason
    runs to the next ';' (report/footnotes.py moves it to a note), so the
    items after it stay in the table."""
    out = ""
    for i, part in enumerate(parts):
        if i:
            out += "; " if "unavailable" in parts[i - 1] else ", "
        out += part
    return out


def _val(env: dict, key: str, fmt=str) -> str:
    return fmt(env[key]) if key in env else _why(env, key)


def _host(env: dict) -> str:
    text = _val(env, "host.name")
    machine = " ".join(str(env[k]) for k in ("system.vendor", "system.product") if k in env)
    board = env.get("system.board")
    extra = ", ".join(x for x in (machine, f"board {board}" if board else "") if x)
    if extra and "unavailable" in text:
        return f"{text}; {extra}"
    return text + (f" ({extra})" if extra else "")


def _cpu(env: dict) -> str:
    model = _val(env, "cpu.model")
    sockets = env.get("cpu.sockets")
    parts = [f"{sockets} x {model}" if sockets else model]
    if "cpu.cores" in env and "cpu.threads" in env:
        parts.append(f"{env['cpu.cores']} cores / {env['cpu.threads']} threads")
    elif "cpu.threads" in env:
        parts.append(f"{env['cpu.threads']} threads")
    if env.get("cpu.hypervisor"):
        parts.append("virtual machine")
    return _join(parts)


def _unit_text(env: dict, key: str) -> str:
    """A value with the unit its key names, as env --diff and compare show it ("8,192 KiB", "2,400
    MHz"): the summary printed "8192 KiB" beside the diff's "8,192 KiB"."""
    from clusterbench.environment import value_text

    return value_text(key, env.get(key))


def _clock(env: dict) -> str:
    parts = []
    for label, key in (("min", "cpu.freq_min_mhz"), ("base", "cpu.freq_base_mhz"), ("max", "cpu.freq_max_mhz")):
        if key in env:
            parts.append(f"{label} {_unit_text(env, key)}")
    turbo = ("on" if env["cpu.turbo"] else "off") if "cpu.turbo" in env else _why(env, "cpu.turbo")
    if not parts and "cpu.governor" not in env and \
            env.get("cpu.freq_max_mhz_error") == env.get("cpu.governor_error"):
        # no cpufreq at all: one reason for range and governor
        return f"{_why(env, 'cpu.governor')}; turbo {turbo}"
    gov = _val(env, "cpu.governor")
    if "cpu.scaling_driver" in env:
        gov += f" ({env['cpu.scaling_driver']})"
    return f"{', '.join(parts) or 'range ' + _why(env, 'cpu.freq_max_mhz')}; governor {gov}; turbo {turbo}"


def _idle(env: dict) -> list[tuple[str, str]]:
    """How idle CPUs sleep; only for snapshots that say (older ones have no such keys)."""
    if "cpu.idle_driver" not in env:
        return []
    text = f"{env['cpu.idle_driver']} (governor {_val(env, 'cpu.idle_governor')}"
    if "cpu.idle_states" in env:
        text += f"; states {env['cpu.idle_states']}"
    if env.get("cpu.idle_halt_poll_ns") == 0:
        text += "; guest halt poll 0 ns: every idle is a halt"
    elif "cpu.idle_halt_poll_ns" in env:
        text += f"; guest halt poll {_unit_text(env, 'cpu.idle_halt_poll_ns')}"
    return [("CPU idle", text + ")")]


def _memory(env: dict) -> str:
    text = _val(env, "memory.total_bytes", rounded_size_text)
    if "memory.dimms" in env:
        text += f"; {env['memory.dimms']} in {env.get('memory.dimm_slots', '?')} slots"
    else:
        text += f"; DIMM layout {_why(env, 'memory.dimms')}"
    return text


def _numa(env: dict) -> str:
    if "numa.nodes" not in env:
        return _why(env, "numa.nodes")
    nodes = []
    for n in range(env["numa.nodes"]):
        k = f"numa.node{n}"
        mem = f" ({rounded_size_text(env[k + '.memory_bytes'])})" if k + ".memory_bytes" in env else ""
        nodes.append(f"node{n}: cpus {env.get(k + '.cpus', '?')}{mem}")
    return f"{counted(env['numa.nodes'], 'node')}; " + "; ".join(nodes)


def _os(env: dict) -> str:
    return _join([_val(env, 'os.name'), f"kernel {_val(env, 'kernel.release')}"])


def _targets(env: dict) -> list[tuple[str, str]]:
    names = sorted({k[len("target."):].rsplit(".", 1)[0] for k in env if k.startswith("target.")})
    out = []
    for t in names:
        k = f"target.{t}."
        if k + "fs_type" not in env:
            out.append((f"Target {t}", _why(env, k + "fs_type")))
            continue
        # what the snapshot holds of the mount, no more: a snapshot without its source, mount point or
        # options read "nfs4 on ? mounted at ? ()" in a customer's report
        text = str(env[k + "fs_type"])
        for before, key in ((" on ", "source"), (" mounted at ", "mount_point")):
            if env.get(k + key):
                text += f"{before}{env[k + key]}"
        if env.get(k + "mount_options"):
            text += f" ({env[k + 'mount_options']})"
        if k + "device" not in env:
            out.append((f"Target {t}", f"{text}; block device {_why(env, k + 'device')}"))
            continue
        dev = env[k + "device"]
        if k + "raid_level" in env:
            dev += f" {env[k + 'raid_level']}"
        if k + "dm_name" in env:
            dev += f" ({env[k + 'dm_name']})"
        if k + "size_bytes" in env:
            dev += f", {rounded_size_text(env[k + 'size_bytes'])}"
        disks = env.get(k + "disks", "")
        rot = env.get(k + "rotational")
        rot_text = {True: "rotational", False: "non-rotational"}.get(rot, f"rotational: {rot}") \
            if k + "rotational" in env else f"rotational {_why(env, k + 'rotational')}"
        details = [f"model {_val(env, k + 'model')}", rot_text, f"scheduler {_val(env, k + 'scheduler')}"]
        if k + "write_cache" in env:
            details.append(f"write cache {env[k + 'write_cache']}")
        if k + "read_ahead_kb" in env:
            details.append(f"read-ahead {_unit_text(env, k + 'read_ahead_kb')}")
        out.append((f"Target {t}", f"{text}; device {dev}; {f'disk(s) {disks}: ' if disks else ''}{_join(details)}"))
    return out


def _network(env: dict) -> list[tuple[str, str]]:
    out = []
    for n in str(env.get("net.interfaces", "")).split():
        k = f"net.{n}."
        speed = _unit_text(env, k + "speed_mbps") if k + "speed_mbps" in env else f"speed {_why(env, k + 'speed_mbps')}"
        parts = [speed] + ([f"MTU {env[k + 'mtu']}"] if k + "mtu" in env else []) \
            + ([str(env[k + "operstate"])] if k + "operstate" in env else [])   # not "MTU ?, ?"
        if k + "driver" in env:
            parts.append(f"driver {env[k + 'driver']}")
        if k + "bond_mode" in env:
            parts.append(f"bond {env[k + 'bond_mode']} of {env.get(k + 'bond_slaves', '?')}")
        out.append((f"NIC {n}", _join(parts)))
    for hca in str(env.get("ib.hcas", "")).split():
        ports = sorted({k.split(".")[2] for k in env if k.startswith(f"ib.{hca}.") and k.count(".") >= 3})
        for p in ports:
            k = f"ib.{hca}.{p}."
            parts = [_val(env, k + "rate"), str(env.get(k + "state", "?")), str(env.get(k + "link_layer", "?"))]
            if k + "active_mtu" in env:
                parts.append(f"MTU {env[k + 'active_mtu']}")
            hw = " ".join(str(env[f"ib.{hca}.{a}"]) for a in ("hca_type", "board_id") if f"ib.{hca}.{a}" in env)
            if hw:
                parts.append(hw + (f" fw {env[f'ib.{hca}.fw_ver']}" if f"ib.{hca}.fw_ver" in env else ""))
            out.append((f"IB {hca} port {p}", _join(parts)))
    if "net.interfaces_error" in env:
        out.insert(0, ("Network", _why(env, "net.interfaces")))
    return out or [("Network", "no hardware interfaces found")]


def _mpi(env: dict) -> list[tuple[str, str]]:
    if "mpi.flavour" in env:
        text = f"{env['mpi.flavour']} {env.get('mpi.version', '')}".strip()
    elif "mpi.mpiexec_version" in env:
        text = str(env["mpi.mpiexec_version"])
    else:
        text = _why(env, "mpi.flavour")
    if "mpi.mpiexec" in env:
        text += f" ({env['mpi.mpiexec']})"
    out = [("MPI", text)]
    tuning = [f"{k[len('mpi.env.'):]}={v}" for k, v in sorted(env.items()) if k.startswith("mpi.env.")]
    if tuning:
        out.append(("MPI variables", " ".join(tuning)))
    return out


def _compiler(env: dict) -> str:
    text = _val(env, "compiler.cc")
    if "compiler.mpicc_compiler" in env:
        text += f"; mpicc wraps {env['compiler.mpicc_compiler']}"
    return text


def cbk_text(env: dict) -> str:
    """cbk's build in one line (the report's block, and a cluster's nodes compared: analysis/cluster/cbk_fact.py)."""
    if "cbk.version" not in env:
        return _why(env, "cbk.version")
    parts = [str(env["cbk.version"])]
    if "cbk.mpi" in env:
        from clusterbench.environment.mpi_consistency import library_text

        parts.append(f"MPI {library_text(str(env.get('cbk.mpi_library') or ''))}" if env["cbk.mpi"] else "no MPI")
    build = " ".join(str(env[k]) for k in ("cbk.compiler", "cbk.compiler_flags", "cbk.build_type") if k in env)
    parts.append(build or f"build flags {_why(env, 'cbk.compiler_flags')}")
    if "cbk.features" in env:
        parts.append(f"built in: {env['cbk.features']}")
    return _join(parts)


def _whole(env: dict, key: str) -> int | None:
    try:
        return int(env[key])
    except (KeyError, TypeError, ValueError):
        return None


def _dirty_limit(env: dict, ratio: str, size: str) -> str | None:
    """A dirty-page limit as the kernel applies it: the byte form where set (non-zero), else the ratio."""
    if (n := _whole(env, f"vm.{size}")):
        return rounded_size_text(n)
    r = _whole(env, f"vm.{ratio}")
    return None if r is None else f"{r} % of memory"


def _dirty(env: dict) -> str:
    """The page cache's write-back settings in words: the line read "dirty_ratio=20
    dirty_background_ratio=10 dirty_bytes=0 ... dirty_expire_centisecs=3000", sysctl
    spellings and centiseconds in a customer's table (the keys stay in the exports)."""
    parts = []
    if blocking := _dirty_limit(env, "dirty_ratio", "dirty_bytes"):
        parts.append(f"writers throttled at {blocking} dirty")
    if background := _dirty_limit(env, "dirty_background_ratio", "dirty_background_bytes"):
        parts.append(f"background write-back from {background}")
    if (expire := _whole(env, "vm.dirty_expire_centisecs")) is not None:
        parts.append(f"dirty pages written back after {expire / 100:g} s")
    if (every := _whole(env, "vm.dirty_writeback_centisecs")) is not None:
        parts.append(f"checked every {every / 100:g} s" if every else "no periodic write-back")
    return ", ".join(parts) if parts else _why(env, "vm.dirty_ratio")


def _thp(env: dict) -> str:
    return _join([f"enabled {_val(env, 'thp.enabled')}", f"defrag {_val(env, 'thp.defrag')}"])


def _gpus(env: dict) -> str:
    count = env.get("gpu.count")
    if env.get("gpu.source") in ("nvidia-smi", "rocm-smi"):
        kinds: Counter[str] = Counter()
        for k in sorted(k for k in env if k.startswith("gpu.") and k.endswith(".name")):
            g = k.removesuffix(".name")
            kinds[f"{env[k]} ({_unit_text(env, g + '.memory_mib')}, driver {env.get(g + '.driver_version')})"] += 1
        return ", ".join(f"{n} x {d}" for d, n in kinds.items())
    if count:
        vendors = sorted({v for k, v in env.items() if k.startswith("gpu.pci.")})
        return f"{counted(count, '/'.join(vendors) + ' GPU')} on the PCI bus; names {_why(env, 'gpu.query')}"
    if count == 0:
        return f"none: {env.get('gpu.query_error', 'no GPU listed')}, and no GPU on the PCI bus"
    return _why(env, "gpu.count")


def _modules(env: dict) -> list[tuple[str, str]]:
    """Only where a module system is set up: elsewhere the line would say nothing."""
    if "modules.loaded" not in env:
        return []
    return [("Modules", env["modules.loaded"] or f"none loaded ({env.get('modules.system', 'modules')})")]


def _container(env: dict) -> list[tuple[str, str]]:
    runtime = env.get("container.runtime")
    if not runtime or runtime == "none":
        return []
    return [("Container", f"{runtime}" + (f" {env['container.image']}" if env.get("container.image") else ""))]


def _batch_job(env: dict) -> list[tuple[str, str]]:
    """Only inside a batch job: "slurm, partition gpu, 4 nodes node[01-04], CPUs per node 2(x3),1, ..."."""
    system = env.get("batchjob.system")
    if not system:
        return []
    parts = [str(system)]
    for key, words in (("partition", "partition"), ("queue", "queue"), ("parallel_environment", "parallel environment"),
                       ("slots", "slots"), ("node_count", "nodes"), ("nodes", "on"),
                       ("cpus_per_node", "CPUs per node"), ("cpus_per_task", "CPUs per task"), ("gpus", "GPUs"), ("gpus_per_node", "GPUs per node"),
                       ("gpus_per_task", "GPUs per task")):
        if f"batchjob.{key}" in env:
            parts.append(f"{words} {env[f'batchjob.{key}']}")
    return [("Batch job", ", ".join(parts))]


def _software(env: dict) -> str:
    return _join([f"Python {_val(env, 'python.version')}", f"clusterbench {_val(env, 'clusterbench.version')}"])


def _conditions(env: dict) -> list[tuple[str, str]]:
    """What the run changed around it (--memory-limit, --setting), when it changed anything."""
    parts = []
    if isinstance(env.get("conditions.memory_limit_bytes"), int):
        parts.append(f"memory limit {env['conditions.memory_limit_bytes'] / 2**20:g} MiB")
    prefix = "conditions.setting."
    for k in sorted(k for k in env if k.startswith(prefix) and not k.endswith(".before")):
        parts.append(f"{k[len(prefix):]}={env[k]} (was {env.get(k + '.before', '?')})")
    return [("Run conditions", "; ".join(parts))] if parts else []


# Keys every imported snapshot holds that are not facts of the machine (import.file: the file's path;
# import.tool_version: already in import.source, "fio 3.33 JSON").
_IMPORT_BOOKKEEPING = ("capture.schema", "host.name", "import.source", "import.file", "import.tool_version")


def stated_by_file(env: dict) -> list[tuple[str, str]]:
    """(item, text) of each fact an imported run's file stated; [] for a captured snapshot."""
    from clusterbench.environment.key_words import key_words

    # what an imported file states about its machine (importers' run.facts), named as the block names them
    return [(key_words(k), str(v)) for k, v in env.items()
            if k not in _IMPORT_BOOKKEEPING and not k.endswith("_error")]


def not_recorded_text(env: dict) -> str | None:
    """'not recorded by IOR 4.0.0 JSON: only what it states is listed' for an imported run's snapshot, else None."""
    source = env.get("import.source")
    return f"not recorded by {source}: only what it states is listed" if source else None


def summary_line(env: dict) -> str:
    """A system in one line: CPU, memory, OS; for an imported run, what its
    file stated and that the rest was not recorded (one reason, not one per item)."""
    if not_recorded_text(env):
        stated = "; ".join(f"{k} {v}" for k, v in stated_by_file(env))
        return f"environment not recorded by {env['import.source']}" + (f" (the file states: {stated})" if stated else "")
    items = dict(summary_block(env))
    # an item not read is named: its line read "32 GiB; not available; kernel not available", the OS unsaid
    named = {"CPU": "CPU", "Memory": "memory", "OS": "OS"}
    return "; ".join(f"{named[k]} {v}" if str(v).startswith("unavailable") else str(v)
                     for k, v in items.items() if k in named)


def summary_block(env: dict) -> list[tuple[str, str]]:
    if not_recorded_text(env):
        # an imported run's snapshot: each item the file did not state was its own
        # "unavailable: imported from IOR 4.0.0 JSON: not recorded" line, a dozen of them
        return [("Host", _val(env, "host.name")), *stated_by_file(env), ("Environment", not_recorded_text(env))]
    lines = _conditions(env) + [("Host", _host(env)), ("CPU", _cpu(env)), ("CPU clock", _clock(env)), *_idle(env),
                                ("Memory", _memory(env)), ("NUMA", _numa(env)), ("OS", _os(env))]
    lines += _targets(env)
    lines += _network(env)
    lines += _mpi(env)
    lines += [("Compiler", _compiler(env)), ("cbk", cbk_text(env)), ("Tuned profile", _val(env, "tuned.profile")),
              ("Dirty page write-back", _dirty(env)), ("Transparent huge pages", _thp(env)), ("GPUs", _gpus(env)),
              ("Software", _software(env))]
    lines += _modules(env) + _container(env) + _batch_job(env)
    return lines
