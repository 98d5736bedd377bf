"""Frozen records: what ``@dataclass(frozen=True)`` gives, without compiling code per class.

``dataclass`` writes each method it adds as source text and compiles it, class by class: about
0.1 ms a method, six for a frozen class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``). With 25 to 60 classes on a command's path that is a fifth of
its start-up. A record is a dataclass that generates nothing (``dataclasses.fields``, ``replace``,
``is_dataclass`` and ``asdict`` work as before); :class:`Record` supplies the six methods once,
with dataclass's meaning: positional or keyword arguments in field order, defaults and default
factories, ``__post_init__``; frozen (``FrozenInstanceError``); equal when of the same class with
equal compared fields, hashed by those fields, shown as ``Name(field=value, ...)``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

T = TypeVar("T")
_MISSING = dataclasses.MISSING


class _Spec:
    __slots__ = ("compared", "init", "later", "shown")

    def __init__(self, cls: type) -> None:
        fs = dataclasses.fields(cls)
        self.init = tuple((f.name, f.default, f.default_factory) for f in fs if f.init)
        self.later = tuple((f.name, f.default, f.default_factory) for f in fs if not f.init)
        self.compared = tuple(f.name for f in fs if f.compare)
        self.shown = tuple(f.name for f in fs if f.repr)


_SPECS: dict[type, _Spec] = {}


def _spec(cls: type) -> _Spec:
    spec = _SPECS.get(cls)
    if spec is None:
        spec = _SPECS[cls] = _Spec(cls)
    return spec


class Record:
    """The ``__init__``, frozen ``__setattr__``/``__delattr__``, ``__eq__``, ``__hash__`` and
    ``__repr__`` of every :func:`record` class."""

    __slots__ = ()
    if TYPE_CHECKING:  # what makes a record a DataclassInstance to mypy (fields, replace)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        spec = _spec(self.__class__)
        if len(args) > len(spec.init):
            raise TypeError(
                f"{self.__class__.__name__}() takes {len(spec.init)} positional arguments "
                f"but {len(args)} were given"
            )
        setter = object.__setattr__
        for i, (name, default, factory) in enumerate(spec.init):
            if i < len(args):
                if name in kwargs:
                    raise TypeError(f"{self.__class__.__name__}() got multiple values for {name!r}")
                value = args[i]
            elif name in kwargs:
                value = kwargs.pop(name)
            elif default is not _MISSING:
                value = default
            elif factory is not _MISSING:
                value = factory()
            else:
                raise TypeError(
                    f"{self.__class__.__name__}() missing 1 required argument: {name!r}"
                )
            setter(self, name, value)
        if kwargs:
            raise TypeError(
                f"{self.__class__.__name__}() got an unexpected keyword argument "
                f"{next(iter(kwargs))!r}"
            )
        for name, default, factory in spec.later:
            if default is not _MISSING:
                setter(self, name, default)
            elif factory is not _MISSING:
                setter(self, name, factory())
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = _spec(self.__class__).compared  # as tuples, as dataclass compares (identity first)
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in _spec(self.__class__).compared))

    def __repr__(self) -> str:
        cls = self.__class__
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in _spec(cls).shown)
        return f"{cls.__qualname__}({inner})"


if TYPE_CHECKING:
    from typing import dataclass_transform

    @dataclass_transform(frozen_default=True, eq_default=True)
    def record(cls: type[T]) -> type[T]: ...

else:

    def record(cls):
        """``@dataclass(frozen=True)`` for a subclass of :class:`Record`."""
        if not issubclass(cls, Record):
            raise TypeError(f"{cls.__name__} must subclass Record")
        return dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
