"""Paths as the package's functions take them (str or os.PathLike). Every request itself is built
by the library's front door from the command line's options (_compare.py, _api.py, _generate.py,
_commands.py): nothing here decides what a request means."""
import os

from ._errors import InvalidArgument


def _path(p, what="path"):
    if not isinstance(p, (str, os.PathLike)):
        raise InvalidArgument(f"{what}: expected a path (str or os.PathLike), not {type(p).__name__} {p!r}")
    return os.fspath(p)
