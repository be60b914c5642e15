"""Generated code: functions defined from source text, and fast frozen construction.

The schema compiler and the canonical writer define their generated source here;
:func:`draft_class` gives frozen dataclasses built in hot paths a plain twin to fill in.
"""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Callable, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def define(name: str, label: str, source: str, names: Mapping[str, Any]) -> Callable[..., Any]:
    """The function ``name`` that ``source`` defines, with ``names`` as its globals.

    Its source is kept in linecache (without an mtime, so never dropped), so tracebacks,
    ``inspect.getsource`` and debuggers show its lines.
    """
    namespace = dict(names)
    filename = f"<cmp compiled {label} #{next(_COMPILATIONS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)
    function: Callable[..., Any] = namespace[name]
    return function


_COMPILATIONS = itertools.count(1)


def draft_class(cls: type) -> type:
    """A plain class with the same slots as frozen ``cls``, to fill in and then turn into one.

    Plain slot stores and one ``__class__`` assignment cost about half of a frozen
    dataclass's object.__setattr__ per field; CPython allows it only between identical
    layouts, which is tried here, once.
    """
    if "__slots__" not in cls.__dict__:
        raise ValueError(f"cannot build {cls.__name__} from a draft: it has no __slots__")
    draft = type(f"_{cls.__name__}Draft", (), {"__slots__": cls.__dict__["__slots__"]})
    probe: Any = object.__new__(draft)
    try:
        probe.__class__ = cls
    except TypeError as exc:
        raise ValueError(f"cannot build {cls.__name__} from a draft: {exc}") from None
    return draft
