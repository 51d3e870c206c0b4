"""CPU: model, sockets/cores/threads, frequencies, governor, turbo, idle.

Counts come from the kernel's topology files (what the scheduler sees),
with /proc/cpuinfo as the fallback for kernels or containers without them.
Frequencies come from cpufreq; a machine without a cpufreq driver (most
virtual machines) gets *_error keys saying so, not the nominal clock.
"""
from __future__ import annotations

from clusterbench.environment import cpu_quota_cgroup, cpuset_cgroup
from clusterbench.environment.sources import (Context, Reading, format_cpu_list, khz_to_mhz, parse_cpu_list, put,
                                              put_file)

CPU = "/sys/devices/system/cpu"
# Flags worth a line in a report: they decide which code paths compute kernels take.
ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile",
             "asimd", "sve", "sve2")


def _cpuinfo_blocks(text: str) -> list[dict[str, str]]:
    blocks, cur = [], {}
    for line in text.splitlines():
        if not line.strip():
            if cur:
                blocks.append(cur)
                cur = {}
            continue
        k, sep, v = line.partition(":")
        if sep:
            cur[k.strip()] = v.strip()
    if cur:
        blocks.append(cur)
    return blocks


def collect(env: dict, ctx: Context) -> None:
    cpuinfo = ctx.read("/proc/cpuinfo")
    blocks = _cpuinfo_blocks(cpuinfo.text) if cpuinfo.ok else []
    procs = [b for b in blocks if "processor" in b and b["processor"].isdigit()]
    first = procs[0] if procs else (blocks[0] if blocks else {})
    _model(env, cpuinfo.error, first, blocks)
    _topology(env, ctx, procs, cpuinfo.error)
    cpuset_cgroup.collect_into(env, ctx)
    cpu_quota_cgroup.collect_into(env, ctx)
    _frequency(env, ctx, first)
    _idle(env, ctx)


def _model(env: dict, error: str | None, first: dict, blocks: list[dict]) -> None:
    if error:
        env["cpu.model_error"] = error
        return
    # x86: "model name"; POWER: "cpu"; arm64 has no model string in cpuinfo
    model = first.get("model name") or first.get("cpu")
    if not model:
        model = next((b.get("Model") or b.get("Hardware") for b in blocks if b.get("Model") or b.get("Hardware")), None)
    if model:
        env["cpu.model"] = " ".join(model.split())
    else:
        env["cpu.model_error"] = "no 'model name' line in /proc/cpuinfo"
    if first.get("vendor_id"):
        env["cpu.vendor"] = first["vendor_id"]
    flags = set((first.get("flags") or first.get("Features") or "").split())
    if flags:
        env["cpu.isa_extensions"] = " ".join(f for f in ISA_FLAGS if f in flags)
        env["cpu.hypervisor"] = "hypervisor" in flags


def _topology(env: dict, ctx: Context, procs: list[dict], cpuinfo_error: str | None) -> None:
    online: dict = {}
    cpus = put(online, "cpus", ctx.read(f"{CPU}/online"), parse_cpu_list, f"{CPU}/online") \
        or [int(p["processor"]) for p in procs]
    if not cpus:
        for k in ("threads", "cores", "sockets"):
            env[f"cpu.{k}_error"] = online.get("cpus_error") or cpuinfo_error or "no processors listed"
        return
    env["cpu.threads"] = len(cpus)
    env["cpu.online"] = format_cpu_list(cpus)
    packages, cores = set(), set()
    missing = None
    for n in cpus:
        top = f"{CPU}/cpu{n}/topology"
        pkg = ctx.read(f"{top}/physical_package_id")
        # a core is identified by the set of hardware threads sharing it
        sib = ctx.read(f"{top}/thread_siblings_list")
        if not (pkg.ok and sib.ok):
            missing = pkg.error or sib.error
            break
        packages.add(pkg.text.strip())
        cores.add(sib.text.strip())
    if missing:
        # fall back to cpuinfo's "physical id" / "core id" (x86 only)
        if procs and all("physical id" in p and "core id" in p for p in procs):
            packages = {p["physical id"] for p in procs}
            cores = {(p["physical id"], p["core id"]) for p in procs}
        else:
            env["cpu.sockets_error"] = env["cpu.cores_error"] = missing
            return
    env["cpu.sockets"] = len(packages)
    env["cpu.cores"] = len(cores)
    per_core = len(cpus) / len(cores)
    env["cpu.threads_per_core"] = int(per_core) if per_core.is_integer() else round(per_core, 2)
    put_file(env, "cpu.smt_active", ctx, f"{CPU}/smt/active", lambda t: t.strip() == "1")
    isolated = ctx.read(f"{CPU}/isolated")
    if isolated.ok:
        env["cpu.isolated"] = isolated.text.strip()


def _policies(ctx: Context) -> list[str]:
    names = [d for d in ctx.listdir(f"{CPU}/cpufreq") if d.startswith("policy") and d[6:].isdigit()]
    if names:
        return [f"{CPU}/cpufreq/{d}" for d in sorted(names, key=lambda d: int(d[6:]))]
    # kernels before 4.x: per-CPU directories only
    return [f"{CPU}/cpu0/cpufreq"] if ctx.exists(f"{CPU}/cpu0/cpufreq") else []


def _joined(values: list[str]) -> str:
    """One value when all policies agree, else each distinct value once."""
    return ", ".join(dict.fromkeys(values))


def _frequency(env: dict, ctx: Context, first: dict) -> None:
    policies = _policies(ctx)
    if not policies:
        why = f"no cpufreq policy in {CPU}/cpufreq (no cpufreq driver: a virtual machine, or frequency scaling off)"
        for k in ("freq_min_mhz", "freq_max_mhz", "governor", "scaling_driver"):
            env[f"cpu.{k}_error"] = why
        if first.get("cpu MHz"):
            put(env, "cpu.freq_cur_mhz", Reading(first["cpu MHz"]), lambda t: round(float(t)), "/proc/cpuinfo")
        _turbo(env, ctx)
        return
    p0 = policies[0]
    put_file(env, "cpu.freq_min_mhz", ctx, f"{p0}/cpuinfo_min_freq", khz_to_mhz)
    put_file(env, "cpu.freq_max_mhz", ctx, f"{p0}/cpuinfo_max_freq", khz_to_mhz)
    if ctx.exists(f"{p0}/base_frequency"):  # intel_pstate and amd-pstate only
        put_file(env, "cpu.freq_base_mhz", ctx, f"{p0}/base_frequency", khz_to_mhz)
    put_file(env, "cpu.scaling_driver", ctx, f"{p0}/scaling_driver")
    governors, current = [], []
    for p in policies:
        g = ctx.read(f"{p}/scaling_governor")
        if not g.ok:
            env["cpu.governor_error"] = g.error
            governors = []
            break
        governors.append(g.text.strip())
        c = ctx.read(f"{p}/scaling_cur_freq")
        if c.ok and c.text.strip().isdigit():
            current.append(int(c.text))
    if governors:
        env["cpu.governor"] = _joined(governors)
    if current:
        env["cpu.freq_cur_mhz"] = round(sum(current) / len(current) / 1000)
    # scaling limits below the hardware range are a setting someone made
    put_file(env, "cpu.scaling_max_mhz", ctx, f"{p0}/scaling_max_freq", khz_to_mhz)
    _turbo(env, ctx)


def _idle(env: dict, ctx: Context) -> None:
    """How idle CPUs sleep, which sets what waking one costs: a queue-depth-1
    I/O or a ping-pong pays it per operation (on a VM with haltpoll and
    guest_halt_poll_ns 0, a VM exit per wake-up: 2-4x fewer IOPS at QD 1)."""
    if not ctx.exists(f"{CPU}/cpuidle/current_driver"):
        env["cpu.idle_driver_error"] = f"no {CPU}/cpuidle (no cpuidle driver: the CPUs idle as the kernel's default)"
        return
    put_file(env, "cpu.idle_driver", ctx, f"{CPU}/cpuidle/current_driver")
    governor = f"{CPU}/cpuidle/current_governor"
    put_file(env, "cpu.idle_governor", ctx, governor if ctx.exists(governor) else f"{governor}_ro")
    states = sorted((d for d in ctx.listdir(f"{CPU}/cpu0/cpuidle") if d[5:].isdigit() and d.startswith("state")),
                    key=lambda d: int(d[5:]))
    names = [ctx.read(f"{CPU}/cpu0/cpuidle/{d}/name") for d in states]
    if states and all(n.ok for n in names):
        env["cpu.idle_states"] = ", ".join(n.text.strip() for n in names)
    haltpoll = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"
    if ctx.exists(haltpoll):
        put_file(env, "cpu.idle_halt_poll_ns", ctx, haltpoll, int)


def _turbo(env: dict, ctx: Context) -> None:
    no_turbo = ctx.read(f"{CPU}/intel_pstate/no_turbo")
    if no_turbo.ok:
        put(env, "cpu.turbo", no_turbo, lambda t: {"0": True, "1": False}[t.strip()])
        return
    boost = ctx.read(f"{CPU}/cpufreq/boost")
    if boost.ok:
        put(env, "cpu.turbo", boost, lambda t: {"1": True, "0": False}[t.strip()])
        return
    env["cpu.turbo_error"] = (f"neither {CPU}/intel_pstate/no_turbo nor {CPU}/cpufreq/boost exists "
                              "(the driver does not expose turbo control)")

