"""The HTML report as a document an integrator hands in unchanged (#38):
what it says at the top, what it hides in notes, what its plots and tables
carry, and how it prints."""
from __future__ import annotations

import re

import pytest


@pytest.mark.timeout(10)
def test_a_footnote_holds_only_the_reason_and_the_values_after_it_stay_in_the_table():
    from clusterbench.environment import summary_block
    from clusterbench.report.footnotes import Footnotes
    from clusterbench.report.html import mark

    env = {
        "host.name": "vm", "os.name": "Debian GNU/Linux 12", "kernel.release": "6.1.0",
        "target./data.fs_type": "ext4", "target./data.source": "/dev/vda", "target./data.mount_point": "/",
        "target./data.mount_options": "rw", "target./data.device": "vda", "target./data.disks": "vda",
        "target./data.model_error": "no such file: /sys/block/vda/device/model",
        "target./data.rotational": False, "target./data.scheduler": "mq-deadline",
        "target./data.write_cache": "write back", "target./data.read_ahead_kb": 128,
        "net.interfaces": "eth0", "net.eth0.speed_mbps_error": "link speed not reported by the driver",
        "net.eth0.mtu": 1400, "net.eth0.operstate": "up", "net.eth0.driver": "virtio_net",
        "cpu.model_error": "no model name, cpu cores", "cpu.cores": 2, "cpu.threads": 2,
        "thp.enabled_error": "no such file", "thp.defrag": "madvise",
    }
    notes = Footnotes()
    cells = {k: notes.text(v, mark) for k, v in summary_block(env)}
    assert "scheduler mq-deadline, write cache write back, read-ahead 128 KiB" in cells["Target /data"]
    assert cells["NIC eth0"].endswith("; MTU 1400, up, driver virtio_net")
    assert "2 cores / 2 threads" in cells["CPU"] and cells["Transparent huge pages"].endswith("; defrag madvise")
    assert set(notes.reasons) == {"no such file: /sys/block/vda/device/model", "link speed not reported by the driver",
                                  "no model name, cpu cores", "no such file"}


@pytest.mark.timeout(120)
def test_randio_latency_percentiles_are_shown_by_show_and_the_report(cli, tmp_path):
    r = cli("run", "randio", f"--dir={tmp_path}", "--file-size=4m", "--runtime=0.2", "--ramp=0",
            "--repeat", "2", "--quiet")
    assert r.status == 0, r.stderr
    show = cli("show", "1")
    assert show.status == 0, show.stderr
    line = next(x for x in show.stdout.splitlines() if x.strip().startswith("latency randread"))
    assert re.search(r"p50 [\d,.]+, p90 [\d,.]+, p99 [\d,.]+, p99\.9 [\d,.]+, p99\.99 [\d,.]+, max [\d,.]+ us", line), line
    out = tmp_path / "r.html"
    assert cli("report", "1", "-o", str(out)).status == 0
    page = out.read_text()
    assert "<th>latency (us), median over repetitions</th><th>p50</th><th>p90</th><th>p99</th>" in page
    # and the headline table quotes the p99 beside the IOPS
    assert re.search(r"random read p99 latency</td><td class=n><span class=\"fig\">[\d,.]+&nbsp;us", page)
