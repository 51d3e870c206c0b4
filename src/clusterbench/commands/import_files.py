"""`clusterbench import FILE...`: other tools' output files as stored runs."""
from __future__ import annotations

import datetime as dt

import click

from clusterbench import importers
from clusterbench.commands.options import RANK_COUNT, ByteSize, PathParam, db_option, width_option
from clusterbench.errors import BadInput
from clusterbench.output.counted_text import agreeing, counted
from clusterbench.output.date_text import minute_text
from clusterbench.output.number_ranges import ranges_text
from clusterbench.output.render_text import plain
from clusterbench.store.opening import open_existing_store, open_store

class RunDate(click.DateTime):
    """When benchmarks ran (UTC), within importers/run_dates.py's range: a
    date out of it is a typo, refused, not stored."""

    def convert(self, value, param, ctx):
        from clusterbench.importers.run_dates import out_of_range

        when = super().convert(value, param, ctx)
        if why := out_of_range(when):
            self.fail(f"'{value}' {why}; give the date (UTC) the files' runs ran", param, ctx)
        return when


# every file given is held in memory until all are checked (nothing is stored
# before): a bound far above any benchmark's output, far below a node's memory
IMPORT_LIMIT = ByteSize(1, 2**30)
DATE = RunDate(formats=["%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"])


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=PathParam(dir_okay=True))
@click.option("--label", help="Name of the configuration the files measured.")
@click.option("--format", "fmt", type=click.Choice(["auto", *importers.names()]), default="auto", show_default=True,
              help="The files' format; auto reads it from the content. " + importers.help_text() + ".")
@click.option("--host", help="The host the files' runs ran on, where a file does not name it.")
@click.option("--date", type=DATE,
              help="When (UTC) they ran, from 1970 to tomorrow, where a file does not say (default: its "
                   "mtime) or says a date out of that range.")
@click.option("--np", "ranks", type=RANK_COUNT,
              help="The rank count, where a file does not give it (OSU's collectives).")
@click.option("--dry-run", is_flag=True, help="Print what would be stored (or why it would be refused); store nothing.")
@click.option("--again", is_flag=True,
              help="Import a file whose bytes the store already holds, or that is given twice (refused otherwise: "
                   "its samples would count twice in compare and trend), e.g. to import it under another --label "
                   "or --host; the runs stored before are kept.")
@click.option("--max-bytes", "max_bytes", type=IMPORT_LIMIT, default="16m", show_default=True,
              help=f"Refuse a file larger than this ({IMPORT_LIMIT.range_text()}; k, m, g suffixes): "
                   "no benchmark output is that big.")
@db_option
@width_option
def command(files, label, fmt, host, date, ranks, dry_run, again, max_bytes, db_url):
    """Import output files of IOR, mdtest, fio, iperf3, iperf 2, netperf, dd,
    OSU micro-benchmarks, Intel MPI Benchmarks, Himeno and STREAM as runs:
    one run per file (or per test of a file holding several), marked as
    imported, at the date the file gives.

    Every file is read and checked before any is stored: a file that cannot
    be read stops the import with one line, and nothing is stored. So does a
    file whose bytes the store already holds, or one given twice (under any
    name), unless --again. Each file's runs are stored in one transaction
    that looks its bytes up again, so two imports of one file at once store
    it once.

    \b
    clusterbench import --label lustre-2023 old-logs/ior-*.txt
    clusterbench import --dry-run results.json
    """
    from clusterbench.importers.import_runs import Overrides, check_file_dates, held_text, read_files
    from clusterbench.store.storable import check_host, check_label

    check_label(label)   # as `run` does: PostgreSQL would refuse some, and digits are a run id
    check_host(host)
    over = Overrides(label, host, date.replace(tzinfo=dt.timezone.utc) if date else None, ranks)
    read = read_files(files, fmt, max_bytes, again=again)
    check_file_dates(read, over)
    store = open_existing_store(db_url) if dry_run else open_store(db_url, writing=True)
    # all looked up before any is stored: a refusal leaves nothing, and --again's notes name only older runs;
    # a stop mid-import tells this command's runs from these (_said_after_a_stop)
    earlier = {} if store is None else {f.sha256: store.runs_imported_from(f.sha256) for f in read}
    for f in read:
        if earlier.get(f.sha256):
            said = held_text(earlier[f.sha256])
            if not again:
                raise BadInput(f"{f.path}: {said}; --again imports it again")
            click.echo(plain(f"note: {f.path}: {said}; {'would be ' if dry_run else ''}imported again (--again)"),
                       err=True)
    from clusterbench.launch.stop_signals import held

    known = {sha: {r.id for r in runs} for sha, runs in earlier.items()}
    stored: list[int] = []
    done = 0
    try:
        for f in read:
            ids = [] if dry_run else _store_one(store, f, over, again, stored)
            with held():   # said and counted as one: a stop before it is looked up in the store (below)
                _say_one(f, ids, over, dry_run)
                stored += ids
                done += 1
    except KeyboardInterrupt:
        if done < len(read) and not dry_run:
            done, stored = _said_after_a_stop(store, read[done], known, done, stored, over)
        if done < len(read) and not dry_run:
            rest = len(read) - done - 1
            click.echo(plain(f"note: stopped after {counted(done, 'file')} of {len(read)}"
                             + (f", stored as {agreeing(len(stored), 'run')} {ranges_text(stored)}" if stored else "")
                             + f"; {read[done].path}{f' and the {rest} after it' if rest else ''} not stored"),
                       err=True)
        raise


def _said_after_a_stop(store, f, known: dict, done: int, stored: list[int], over) -> tuple[int, list[int]]:
    """A stop while file f was stored: its transaction was rolled back, or it had committed and its
    runs were not said yet (a stop is not held for a file's whole write: a file of 100,000 rows takes
    seconds, and Ctrl-C would wait on it). The store says which; a committed file's runs are said
    now. Returns the files done and the runs stored."""
    from clusterbench.launch.stop_signals import deferred
    from clusterbench.errors import StoreFailed

    with deferred():   # a second Ctrl-C must not cut short the lines that say what is kept
        try:
            new = [r.id for r in store.runs_imported_from(f.sha256) if r.id not in known[f.sha256]
                   and r.id not in stored]
        except StoreFailed:
            return done, stored
        if len(new) != len(f.runs):
            return done, stored
        _say_one(f, new, over, False)
    return done + 1, stored + new


def _store_one(store, f, over, again: bool, stored: list[int]) -> list[int]:
    """Stores one file's runs in one transaction; returns their ids."""
    from clusterbench.importers.import_runs import held_text, store_runs
    from clusterbench.store.imported_run import AlreadyImported

    try:   # looked up again inside the storing transaction: another import may have stored it since
        return store_runs(store, f.runs, f.path, over, f.sha256, again=again)
    except AlreadyImported as e:
        runs = f"{agreeing(len(stored), 'run')} {', '.join(map(str, stored))}"
        earlier = f" (this command stored {runs} before it)" if stored else ""
        raise BadInput(f"{f.path}: {held_text(e.runs)}; --again imports it again{earlier}") from None


def _say_one(f, ids: list[int], over, dry_run: bool) -> None:
    """Says each of a file's runs: stored as run N (ids), or what would be stored (dry_run)."""
    from clusterbench.importers.import_runs import given_ranks

    path = f.path
    for i, run in enumerate(f.runs):
        what = (f"{path}: {run.source}, {counted(len(run.steps), 'step')}, {counted(run.sample_count, 'sample')}"
                + (f", started {minute_text(run.started)} UTC" if run.started else "")
                + (f", host {', '.join(run.hosts)}" if run.hosts else ""))
        # plain: a job name, a path or a host is the file's text (fio prints a job name as given)
        if dry_run:
            given_ranks(run, over.ranks)
            click.echo(plain("would store " + what))
            for st in run.steps:
                click.echo(plain(f"  {st.name or st.kernel}: {st.kernel} "
                                 + " ".join(f"--{k}={v}" for k, v in st.params.items()) + f" (ranks {st.ranks})"))
                for s in st.samples:
                    click.echo(plain(f"    rep {s.repetition} {s.label} [{s.condition}] {s.value} {s.unit}"))
        else:
            click.echo(plain(f"stored as run {ids[i]}: " + what))
        for note in run.notes:
            click.echo(plain(f"note: {path}: {note}"), err=True)
