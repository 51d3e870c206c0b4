"""A verdict's reason given once under its table: the cell keeps the verdict
(and its p-value and flags) with a letter, the note below the reason. The same
sentence ("n = 3 vs 3 cannot reach p < 0.05 ...; the CIs ... overlap") in every
row of a comparison stacked the verdict column, a few words wide, into towers
of nine lines on a printed page. The Markdown report letters them alike:
there the sentence, repeated in each of fifteen rows, was most of the page."""
from __future__ import annotations

from string import ascii_lowercase

from clusterbench.output.render_text import html as esc
from clusterbench.output.render_text import markdown as md


class ReasonNotes:
    """Reasons of one table, lettered in first-use order; the same reason keeps its letter."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def letter(self, reason: str) -> str:
        if reason not in self.reasons:
            self.reasons.append(reason)
        i = self.reasons.index(reason)
        return ascii_lowercase[i % 26] * (i // 26 + 1)

    def _lettered(self, text: str, reason: str | None) -> tuple[str, str | None]:
        """A verdict text ending in ": reason" as its words and the reason's letter; (text, None) otherwise."""
        tail = f": {reason}"
        if not reason or not text.endswith(tail):
            return text, None
        return text[:-len(tail)], self.letter(reason)

    def cell(self, text: str, reason: str | None) -> str:
        words, letter = self._lettered(text, reason)
        return f"{esc(words)}&nbsp;<sup>({letter})</sup>" if letter else esc(words)

    def html(self) -> list[str]:
        if not self.reasons:
            return []
        return ['<ol class="notes reasons" type="a">' + "".join(f"<li>{esc(r)}</li>" for r in self.reasons) + "</ol>"]

    def markdown_cell(self, text: str, reason: str | None) -> str:
        """cell() for a Markdown table: the verdict's words and "(a)"."""
        words, letter = self._lettered(text, reason)
        return f"{md(words)} ({letter})" if letter else md(words)

    def markdown(self) -> list[str]:
        """The reasons under a Markdown table, each after its letter, a paragraph each (Markdown's
        lists number, never letter, and a list here ran into the summary's list below it)."""
        return [line for r in self.reasons for line in ("", f"({self.letter(r)}) {md(r)}")]
