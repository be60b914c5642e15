"""Generated code: functions defined from source text, and fast frozen construction.

The schema compiler (:mod:`cmp._compiler`) and the canonical writer (:mod:`cmp._writer`)
generate Python source from the schemas and define it here. Reports, redaction findings
and the model's objects are frozen dataclasses built in hot paths; :func:`draft_class`
gives the plain twin they are filled in as (see its docstring for the invariant).
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

    The text is compiled under a file name of its own kept in linecache (an entry without
    an mtime is never dropped by checkcache), so that tracebacks, ``inspect.getsource``
    and debuggers show its lines.
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

    A frozen dataclass sets each field through object.__setattr__; plain slot stores
    and one ``__class__`` assignment at the end cost about half. CPython allows that
    assignment only between classes of identical layout, which is tried here, once.
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
