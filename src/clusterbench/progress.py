"""Progress of a run on stderr: a bar per step counting repetitions, with
the latest figure, so a long run shows it is alive and what it sees."""
from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress


def figure(rec: dict) -> str:
    rate, unit = rec.get("rate"), rec.get("rate_unit") or ""
    text = f"{rec.get('phase')} {rec.get('mode') or ''}".strip()
    if isinstance(rate, (int, float)):
        text += f" {rate:,.1f} {unit}"
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

    def record(self, rec: dict) -> None:
        if self._task is not None:
            self._bar.update(self._task, completed=int(rec.get("repetition", 0)), latest=figure(rec))

    def end_step(self) -> None:
        if self._task is not None:
            task = self._bar.tasks[-1]
            self._bar.update(self._task, completed=task.total)
        self._task = None

    def note(self, message: str) -> None:
        if self.enabled:
            self._bar.console.print(f"[yellow]{message}[/yellow]")
