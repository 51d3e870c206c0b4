"""E6: each TCP pair of a `tcp --role=pairs` step, as every view shows it
under the step's table (the step's own row is their aggregate): the pair's
median rate over repetitions beside its link's nominal rate."""
from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass
class PairRow:
    phase: str
    pair: int
    server_host: str
    client_host: str
    gbit_per_s: float | None    # median over repetitions
    link: str                   # "10 Gbit/s", or "not known"
    of_link: str                # "94 %", or "-"


HEADINGS = ("phase", "pair", "server -> client", "Gbit/s (median)", "link", "of link")
TITLE = "each pair (the row above is their aggregate)"


def of_step(st: dict) -> list[PairRow]:
    from clusterbench.results.records import pair_rates

    out = []
    for p in pair_rates(st.get("build")) or []:
        rate = statistics.median(p.gbit_per_s) if p.gbit_per_s else None
        link = f"{p.link_gbit_per_s:g} Gbit/s" if p.link_gbit_per_s else "not known"
        share = f"{rate / p.link_gbit_per_s:.0%}".replace("%", " %") if rate and p.link_gbit_per_s else "-"
        out.append(PairRow(p.phase, p.pair, p.server_host, p.client_host, rate, link, share))
    return out
