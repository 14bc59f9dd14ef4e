"""Help a person reads: Typer's command and group classes with four changes to what ``--help``
shows (issues 32 and 45). Help is plain text, never Rich markup: each command's and option's help
is escaped once, when the command is built (:func:`rich.markup.escape`), so ``pip install
'apple_roofline[graphics]'`` in a help text shows whole. A flag (``--quick``, ``--version``,
``--help``) shows no ``<bool>`` placeholder, since it takes no value; an argument with a metavar
(``RUN.json``) shows that alone, not also its Python type (``<path>``, ``<list[str]>``); the usage
line writes a required argument as ``RUN.json``, not ``{RUN.json}``. Options that take a value name
it with their own ``metavar=`` (``--out DIR``, ``--suite SUITE,...``), where each is defined.
"""

from __future__ import annotations

from typing import Any, List

from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

__all__ = ["ReadableCommand", "ReadableGroup"]


def _no_type(ctx: Any) -> None:
    """An argument's type column: empty (its metavar says what it is)."""
    return None


def _readable(params: List[Any]) -> List[Any]:
    for p in params:
        if getattr(p, "is_flag", False) and p.metavar is None:
            p.metavar = ""  # Typer shows an option's metavar in place of its type
        elif getattr(p, "param_type_name", "") == "argument" and p.metavar:
            setattr(p, "display_type_rich", _no_type)
    return params


def _usage(pieces: List[str]) -> List[str]:
    return [piece.replace("{", "").replace("}", "") for piece in pieces]


def _plain(command: Any) -> None:
    """Escape the Rich markup of ``command``'s help texts (its own and its parameters'), once."""
    for owner in (command, *command.params):
        for attr in ("help", "short_help", "epilog"):
            text = getattr(owner, attr, None)
            if isinstance(text, str) and text:
                setattr(owner, attr, escape(text))


class ReadableCommand(TyperCommand):
    """A Typer command whose help shows no type placeholders for flags and named arguments, and its
    help texts as written (no Rich markup); the folders' locks it took
    (:mod:`apple_roofline.study.folder_lock`) are released when it ends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain(self)

    def get_params(self, ctx: Any) -> List[Any]:
        return _readable(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> List[str]:
        return _usage(super().collect_usage_pieces(ctx))

    def invoke(self, ctx: Any) -> Any:
        from ..study.folder_lock import release

        try:
            return super().invoke(ctx)
        finally:
            release()


class ReadableGroup(TyperGroup):
    """The application's group, with :class:`ReadableCommand`'s help (``--version``, ``--help``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain(self)

    def get_params(self, ctx: Any) -> List[Any]:
        return _readable(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> List[str]:
        return _usage(super().collect_usage_pieces(ctx))
