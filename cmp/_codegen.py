"""Generated code: functions defined from source text, and fast frozen construction.

The schema compiler (:mod:`cmp._compiler`) and the canonical writer (:mod:`cmp._writer`)
generate Python source from the schemas and define it here. Reports, redaction findings
and the model's objects are frozen dataclasses built in hot paths; :func:`draft_class`
gives the plain twin they are filled in as (see its docstring for the invariant).
"""

from __future__ import annotations

import builtins
import itertools
import types
from collections.abc import Callable, Mapping

from cmp._precompiled import DEFINITIONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def define(name: str, label: str, source: str, names: Mapping[str, Any]) -> Callable[..., Any]:
    """The function ``name`` that ``source`` defines, with ``names`` as its globals.

    The shipped schemas' builders and writer come compiled ahead, from cmp/_precompiled.py
    (a module generated from these very texts: tools/generate_precompiled.py): the text
    is looked up by equality, and its function runs the same definition under ``names``.
    Its lines are that module's, a file tracebacks and debuggers read. Any other text is
    compiled here, under a file name of its own kept in linecache (an entry without an
    mtime is never dropped by checkcache), so that tracebacks, ``inspect.getsource`` and
    debuggers show its lines too.
    """
    DEFINED[source] = (label, name)
    namespace = dict(names)
    namespace.setdefault("__builtins__", builtins.__dict__)  # as exec would add it
    ahead = DEFINITIONS.get(source)
    if ahead is not None:
        function: Callable[..., Any] = types.FunctionType(ahead.__code__, namespace, name)()
        return function
    import linecache  # here: the precompiled texts need none, and it loads tokenize

    filename = f"<cmp compiled {label} #{next(_COMPILATIONS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[name]
    return function


# Every text defined in this process, with its label and the name it defines, for the generator.
DEFINED: dict[str, tuple[str, str]] = {}


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
