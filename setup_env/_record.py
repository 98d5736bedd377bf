"""Records: what ``@dataclass(frozen=True)`` gives, without importing ``dataclasses`` to start.

``dataclass`` writes each method it adds as source text and compiles it, class by class, and
importing it brings ``inspect`` (with ``ast``, ``dis`` and ``tokenize``): together about a tenth
of ``detect``'s start-up. A record declares its fields the same way (annotations, defaults,
:func:`field`), but :class:`Record` supplies the methods once, with dataclass's meaning:
positional or keyword arguments in field order, defaults and default factories,
``__post_init__``; frozen (``FrozenInstanceError``); equal when of the same class with equal
compared fields, hashed by those fields, shown as ``Name(field=value, ...)``.
:class:`MutableRecord` is the same without the freezing (and, as ``dataclass``, unhashable).

The standard tools still work on records: ``dataclasses.fields``, ``replace``, ``asdict`` and
``is_dataclass`` see a dataclass, because the first time anything asks a record class for
``__dataclass_fields__`` it is made one (``dataclasses`` imported then, never on the way to a
plain ``detect``). Code on the start-up path uses this module's :func:`fields` and
:func:`replace` instead, which need no import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ClassVar, TypeVar, overload

if TYPE_CHECKING:
    import dataclasses

T = TypeVar("T")
R = TypeVar("R", bound="Record")


class _MissingType:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _MissingType()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record (``dataclasses.FrozenInstanceError`` once that
    module is loaded, so ``except dataclasses.FrozenInstanceError`` keeps working)."""


def _frozen_error(message: str) -> AttributeError:
    import sys

    dc = sys.modules.get("dataclasses")
    if dc is not None:
        return dc.FrozenInstanceError(message)  # type: ignore[no-any-return]
    return FrozenInstanceError(message)


class Field:
    """One field of a record: its name and its options (those ``dataclasses.field`` takes)."""

    __slots__ = ("compare", "default", "default_factory", "init", "metadata", "name", "repr")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.metadata: dict[str, Any] = dict(metadata or {})

    def named(self, name: str) -> Field:
        out = Field(
            self.default, self.default_factory, self.init, self.repr, self.compare, self.metadata
        )
        out.name = name
        return out

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r})"


@overload
def field(
    *,
    default: T,
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    metadata: dict[str, Any] | None = ...,
) -> T: ...
@overload
def field(
    *,
    default_factory: Callable[[], T],
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    metadata: dict[str, Any] | None = ...,
) -> T: ...
@overload
def field(
    *,
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    metadata: dict[str, Any] | None = ...,
) -> Any: ...
def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    metadata: dict[str, Any] | None = None,
) -> Any:
    """A field's options, as ``dataclasses.field`` (for records)."""
    return Field(default, default_factory, init, repr, compare, metadata)


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        text = annotation.strip()
        return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return getattr(annotation, "__origin__", None) is ClassVar or annotation is ClassVar


class _Spec:
    """A record class's fields, in dataclass order (bases first, a redefined field keeping its
    place), and what ``__init__``, ``__eq__`` and ``__repr__`` use of them."""

    __slots__ = ("all", "by_name", "compared", "init", "later", "shown")

    def __init__(self, cls: type) -> None:
        found: dict[str, Field] = {}
        for klass in reversed(cls.__mro__):
            own = klass.__dict__.get("_record_own")
            if own is not None:
                for f in own:
                    found[f.name] = f
        self.all = tuple(found.values())
        self.by_name = found
        fs = self.all
        self.init = tuple((f.name, f.default, f.default_factory) for f in fs if f.init)
        self.later = tuple((f.name, f.default, f.default_factory) for f in fs if not f.init)
        self.compared = tuple(f.name for f in fs if f.compare)
        self.shown = tuple(f.name for f in fs if f.repr)


_SPECS: dict[type, _Spec] = {}


def _spec(cls: type) -> _Spec:
    spec = _SPECS.get(cls)
    if spec is None:
        if "_record_own" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} is not a record (decorate it with @record)")
        spec = _SPECS[cls] = _Spec(cls)
    return spec


class _DataclassFields:
    """``__dataclass_fields__`` on every record class, made on first use: the class becomes a
    real dataclass then (so ``dataclasses.fields``/``replace``/``asdict`` work on it). Each
    class keeps its own in ``_record_dataclass_fields``: a plain class attribute would be
    inherited, and a subclass converted later would show its base's fields."""

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        cls = owner if owner is not None else type(obj)
        made = cls.__dict__.get("_record_dataclass_fields")
        if made is not None:
            return made
        if "_record_own" not in cls.__dict__:
            raise AttributeError("__dataclass_fields__")
        import dataclasses

        for klass in reversed(cls.__mro__):  # bases first, as dataclass reads them
            if "_record_own" in klass.__dict__ and "_record_dataclass_fields" not in klass.__dict__:
                _make_dataclass(klass, dataclasses)
        return cls.__dict__["_record_dataclass_fields"]


def _make_dataclass(cls: type, dataclasses: Any) -> None:
    own: tuple[Field, ...] = cls.__dict__["_record_own"]
    for f in own:
        setattr(
            cls,
            f.name,
            dataclasses.field(
                default=dataclasses.MISSING if f.default is MISSING else f.default,
                default_factory=(
                    dataclasses.MISSING if f.default_factory is MISSING else f.default_factory
                ),
                init=f.init,
                repr=f.repr,
                compare=f.compare,
                metadata=f.metadata or None,
            ),
        )
    # init/repr/eq: Record's own; frozen: Record's __setattr__ (dataclass would replace it).
    dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    cls._record_dataclass_fields = cls.__dict__["__dataclass_fields__"]  # type: ignore[attr-defined]
    delattr(cls, "__dataclass_fields__")  # Record's descriptor answers for every class
    for f in own:  # dataclass leaves plain defaults as class attributes, factories none
        if f.default is MISSING and f.name in cls.__dict__:
            delattr(cls, f.name)


class Record:
    """The ``__init__``, frozen ``__setattr__``/``__delattr__``, ``__eq__``, ``__hash__`` and
    ``__repr__`` of every :func:`record` class."""

    __slots__ = ()
    if TYPE_CHECKING:  # what makes a record a DataclassInstance to mypy (fields, replace)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    else:
        __dataclass_fields__ = _DataclassFields()

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
            elif default is not MISSING:
                value = default
            elif factory is not MISSING:
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
            if default is not MISSING:
                setter(self, name, default)
            elif factory is not MISSING:
                setter(self, name, factory())
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def __setattr__(self, name: str, value: Any) -> None:
        raise _frozen_error(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise _frozen_error(f"cannot delete field {name!r}")

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


class MutableRecord(Record):
    """A record whose fields may be assigned (``@dataclass`` without ``frozen``): a parser's
    accumulator. Unhashable, as a dataclass with ``eq`` and no ``frozen`` is."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        object.__delattr__(self, name)

    __hash__ = None  # type: ignore[assignment]


def _from_dataclasses_field(value: Any) -> Any:
    """A ``dataclasses.field(...)`` written in a record, as this module's :class:`Field` (both
    spellings declare a record's fields; this module's needs no import)."""
    kind = type(value)
    if kind.__name__ != "Field" or kind.__module__ != "dataclasses":
        return value
    import dataclasses

    def plain(v: Any) -> Any:
        return MISSING if v is dataclasses.MISSING else v

    return Field(
        plain(value.default),
        plain(value.default_factory),
        value.init,
        value.repr,
        bool(value.compare),
        dict(value.metadata),
    )


def _declare(cls: type[T]) -> type[T]:
    if not issubclass(cls, Record):
        raise TypeError(f"{cls.__name__} must subclass Record")
    own: list[Field] = []
    # As dataclass reads them (inspect.get_annotations would import inspect, the cost avoided)
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if _is_classvar(annotation):
            continue
        value = _from_dataclasses_field(cls.__dict__.get(name, MISSING))
        f = value.named(name) if isinstance(value, Field) else Field(default=value).named(name)
        if isinstance(f.default, (list, dict, set)):
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed")
        if isinstance(value, Field):
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        own.append(f)
    cls._record_own = tuple(own)  # type: ignore[attr-defined]
    return cls


if TYPE_CHECKING:
    from typing import dataclass_transform

    @dataclass_transform(
        frozen_default=True, eq_default=True, field_specifiers=(field, dataclasses.field)
    )
    def record(cls: type[T]) -> type[T]: ...

    @dataclass_transform(eq_default=True, field_specifiers=(field, dataclasses.field))
    def mutable_record(cls: type[T]) -> type[T]: ...

else:

    def record(cls):
        """``@dataclass(frozen=True)`` for a subclass of :class:`Record`."""
        return _declare(cls)

    def mutable_record(cls):
        """``@dataclass`` for a subclass of :class:`MutableRecord`."""
        if not issubclass(cls, MutableRecord):
            raise TypeError(f"{cls.__name__} must subclass MutableRecord")
        return _declare(cls)


def is_record(obj: object) -> bool:
    """Whether ``obj`` is a record instance (not a class)."""
    return isinstance(obj, Record) and "_record_own" in type(obj).__dict__


def fields(obj: Record | type[Record]) -> tuple[Field, ...]:
    """A record's (or record class's) fields in order, as ``dataclasses.fields``."""
    cls = obj if isinstance(obj, type) else type(obj)
    return _spec(cls).all


def replace(obj: R, **changes: Any) -> R:
    """A copy of record ``obj`` with ``changes``, as ``dataclasses.replace``."""
    spec = _spec(type(obj))
    for name in changes:
        f = spec.by_name.get(name)
        if f is None or not f.init:
            raise TypeError(f"{type(obj).__name__} has no init field {name!r}")
    values = {n: changes[n] if n in changes else getattr(obj, n) for n, _, _ in spec.init}
    return type(obj)(**values)
