"""Progress of a run on stderr: a bar per step counting repetitions, with
the latest figure, so a long run shows it is alive and what it sees."""
from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from clusterbench.sample import Sample


def figure(sample: Sample) -> str:
    text = f"{sample.phase} {sample.condition or ''}".strip()
    if sample.value is not None:
        text += f" {sample.value:,.1f} {sample.unit or ''}"
    return text


class Progress:
    def __init__(self, enabled: bool = True):
        self.console = Console(stderr=True)
        self.enabled = enabled
        self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[latest]}"), TimeElapsedColumn(),
                                 console=self.console, transient=False, disable=not enabled)
        self._task = None

    def __enter__(self):
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self._bar.__exit__(*exc)

    def start_step(self, title: str, repetitions: int) -> None:
        self._task = self._bar.add_task(title, total=repetitions, latest="starting")

    def record(self, sample: Sample, repetition: int) -> None:
        if self._task is not None:
            self._bar.update(self._task, completed=repetition, latest=figure(sample))

    def end_step(self) -> None:
        if self._task is not None:
            task = self._bar.tasks[-1]
            self._bar.update(self._task, completed=task.total)
        self._task = None

    def note(self, message: str) -> None:
        if self.enabled:
            self._bar.console.print(f"[yellow]{message}[/yellow]")
