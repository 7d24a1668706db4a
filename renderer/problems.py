"""Problems are values: where, what, and how to fix it.

Every check in gpu-render (YAML syntax, schema, semantic rules) produces :class:`Problem`
values that are sorted and reported together. Only the CLI turns them into an exit code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Problem:
    """One finding, with a 1-based position in the file the value came from."""

    file: str
    line: int
    column: int
    pointer: str
    message: str
    hint: str = field(default="", compare=False)
    code: str = field(default="", compare=False)
    severity: Severity = field(default=Severity.ERROR, compare=False)

    def format(self) -> str:
        """``file:line:col: pointer: message`` (plus ``(hint)`` when there is one)."""
        where = f"{self.file}:{self.line}:{self.column}"
        pointer = self.pointer or "/"
        text = f"{where}: {pointer}: {self.message}"
        if self.severity is Severity.WARNING:
            text = f"{where}: {pointer}: warning: {self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "pointer": self.pointer,
            "message": self.message,
            "hint": self.hint,
            "code": self.code,
            "severity": self.severity.value,
        }


def errors(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.ERROR]


def warnings(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.WARNING]


class GpuRenderError(Exception):
    """Base of every error gpu-render raises on purpose."""


class UserError(GpuRenderError):
    """Something the user can fix: bad input, a refused write, stale output.

    Raised by the core, caught once in the CLI, printed without a traceback.
    """

    def __init__(self, message: str, *, hint: str = "", problems: Iterable[Problem] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.problems = sorted(problems)


def pointer_of(path: Iterable[object]) -> str:
    """RFC 6901 JSON pointer of a path of keys and indexes."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""
