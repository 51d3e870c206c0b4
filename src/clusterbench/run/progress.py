"""Progress of a run on stderr: a bar per step counting repetitions, with
the latest figure, so a long run shows it is alive and what it sees."""
from __future__ import annotations

from clusterbench.output.render_text import terminal
from clusterbench.results.sample import Sample, condition_shown


def figure(sample: Sample) -> str:
    text = f"{sample.phase} {condition_shown(sample.condition)}".strip()
    if sample.value is not None:
        text += f" {sample.value:,.1f} {sample.unit or ''}"
    return text


class Progress:
    """Shown only when enabled: a --quiet run never imports rich (14 ms of every run, #24)."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._bar = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            from clusterbench.output.console import stderr_console

            from rich.table import Column

            # the step's title folds onto more lines before the latest figure is cut short
            self._bar = RichProgress(TextColumn("{task.description}", table_column=Column(overflow="fold")),
                                     BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[latest]}", table_column=Column(no_wrap=True)),
                                     TimeElapsedColumn(),
                                     console=stderr_console(), transient=False)
        self._task = None

    def __enter__(self):
        if self._bar is not None:
            self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self._bar.__exit__(*exc) if self._bar is not None else None

    def start_step(self, title: str, repetitions: int) -> None:
        if self._bar is not None:
            # as written: a sweep's step title ends in its bracket ('[op=allreduce]'), which rich read as markup
            self._task = self._bar.add_task(terminal(title), total=repetitions, latest="starting")

    def record(self, sample: Sample, repetition: int) -> None:
        if self._task is not None:
            self._bar.update(self._task, completed=repetition, latest=terminal(figure(sample)))

    def end_step(self) -> None:
        if self._task is not None:
            task = self._bar.tasks[-1]
            self._bar.update(self._task, completed=task.total)
        self._task = None

    def note(self, message: str) -> None:
        if self._bar is not None:
            # each line as written: 'skipped scaling: 2 nodes x 1 rank [op=allreduce]: why' lost its bracket
            # to rich's markup, and a reason in brackets would have gone the same way
            shown = "\n".join(terminal(line) for line in message.split("\n"))
            self._bar.console.print(f"[yellow]{shown}[/yellow]")
