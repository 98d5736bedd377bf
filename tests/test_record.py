"""Records behave as the frozen dataclasses they replace (dataclasses itself is the oracle), the
standard tools still work on them, and `detect` never imports `dataclasses` (start-up, issue 16)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from setup_env import _record
from setup_env._record import MutableRecord, Record, field, mutable_record, record

ROOT = Path(__file__).resolve().parent.parent
HOSTS = Path(__file__).resolve().parent / "fixtures" / "hosts"


def _factory() -> list[int]:
    return [1]


@record
class RBase(Record):
    a: int
    b: str = "x"
    tags: list[int] = field(default_factory=_factory)
    hidden: int = field(default=0, repr=False)
    loose: float = field(default=0.5, compare=False)
    later: int = field(default=7, init=False)
    kind: ClassVar[str] = "not a field"


@dataclasses.dataclass(frozen=True)
class DBase:
    a: int
    b: str = "x"
    tags: list[int] = dataclasses.field(default_factory=_factory)
    hidden: int = dataclasses.field(default=0, repr=False)
    loose: float = dataclasses.field(default=0.5, compare=False)
    later: int = dataclasses.field(default=7, init=False)
    kind: ClassVar[str] = "not a field"


@record
class RChild(RBase):
    c: int = 3
    b: str = "y"  # redefined: keeps its place, takes the new default


@dataclasses.dataclass(frozen=True)
class DChild(DBase):
    c: int = 3
    b: str = "y"


@record
class RMeta(Record):
    plain: int | None = field(default=None, metadata={"omit_if_none": True})
    via_dataclasses: list[str] = dataclasses.field(default_factory=list)


@mutable_record
class RMutable(MutableRecord):
    n: int = 0
    items: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.n += 1


def _shown(r: Any, d: Any) -> tuple[str, str]:
    return repr(r).replace("R", "", 1), repr(d).replace("D", "", 1)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, "z"), {}), ((), {"a": 2, "tags": [5]}), ((3, "q", [9], 4, 0.25), {})],
)
def test_a_record_is_built_shown_compared_and_hashed_as_a_frozen_dataclass(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    for rcls, dcls in ((RBase, DBase), (RChild, DChild)):
        r, d = rcls(*args, **kwargs), dcls(*args, **kwargs)
        left, right = _shown(r, d)
        assert left == right
        assert [f.name for f in _record.fields(r)] == [f.name for f in dataclasses.fields(d)]
        assert r == rcls(*args, **kwargs)
        assert (r == rcls(99)) == (d == dcls(99)) is False
        assert r == dataclasses.replace(r, loose=0.75)  # compare=False
        for obj in (r, d):  # a list among the compared fields: unhashable, as dataclass says
            with pytest.raises(TypeError):
                hash(obj)
        assert r.later == d.later == 7


def test_a_factory_gives_each_record_its_own_value_and_errors_match_dataclass() -> None:
    one, two = RBase(1), RBase(1)
    assert one.tags == [1] and one.tags is not two.tags
    for bad_args, bad_kwargs in (((), {}), ((1,), {"a": 1}), ((1,), {"nope": 1}), ((1,) * 9, {})):
        with pytest.raises(TypeError):
            DBase(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError):
            RBase(*bad_args, **bad_kwargs)
    with pytest.raises(TypeError):
        RBase(1, later=3)  # init=False


def test_a_record_is_frozen_and_hashes_by_its_compared_fields() -> None:
    r = RChild(1, tags=())  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del r.a  # type: ignore[misc]
    same_but_loose = RChild(1, tags=(), loose=9.0)  # type: ignore[arg-type]
    assert hash(r) == hash(same_but_loose) and r == same_but_loose
    assert hash(r) != hash(RChild(2, tags=()))  # type: ignore[arg-type]


def test_the_standard_tools_see_a_dataclass() -> None:
    r = RMeta(plain=3)
    assert dataclasses.is_dataclass(r) and dataclasses.is_dataclass(RMeta)
    assert dataclasses.fields(r)[0].metadata["omit_if_none"] is True
    assert _record.fields(r)[0].metadata == {"omit_if_none": True}
    assert dataclasses.asdict(r) == {"plain": 3, "via_dataclasses": []}
    assert dataclasses.replace(r, plain=None) == RMeta()
    assert _record.replace(r, plain=None) == RMeta()
    with pytest.raises(TypeError):
        _record.replace(r, nope=1)
    assert dataclasses.asdict(RChild(1)) == dataclasses.asdict(DChild(1))
    assert RMeta().via_dataclasses == [] and RMeta().via_dataclasses is not RMeta().via_dataclasses


def test_a_mutable_record_takes_assignments_and_is_unhashable() -> None:
    m = RMutable()
    assert m.n == 1  # __post_init__ ran
    m.n = 5
    m.items.append("a")
    assert m == RMutable(n=4, items=["a"])  # 4 + 1 in __post_init__
    with pytest.raises(TypeError):
        hash(m)
    with pytest.raises(TypeError):
        record(type("Plain", (), {"__annotations__": {}}))
    with pytest.raises(TypeError):
        mutable_record(RBase)  # a frozen record's class is not a MutableRecord


def test_a_mutable_default_is_refused_as_dataclass_refuses_it() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Bad(Record):
            xs: list[int] = []  # noqa: RUF012


def test_frozen_error_without_dataclasses_loaded_is_an_attribute_error() -> None:
    code = (
        "import sys\n"
        "from setup_env.facts import OSInfo\n"
        "assert 'dataclasses' not in sys.modules\n"
        "try:\n"
        "    OSInfo().family = 'x'\n"
        "except AttributeError as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert out.stdout.strip() == "FrozenInstanceError"


@pytest.mark.parametrize("host", sorted(p.name for p in HOSTS.iterdir() if p.is_dir()))
def test_detect_never_imports_dataclasses(host: str) -> None:
    """`dataclasses` brings `inspect` (ast, dis, tokenize): ~5 ms of every `detect`. Replayed
    machines of every kind (NVIDIA, cloud, ROCm, Apple, Windows, Jetson) take the probes' paths."""
    code = (
        "import io, sys\n"
        "from setup_env.cli import main\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        f"code = main(['detect', '--json', '--root', {str(HOSTS / host)!r}])\n"
        "sys.stdout = out\n"
        "print(code, sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert out.stdout.split(" ", 1)[1].strip() == "[]", out.stdout + out.stderr


def test_a_subclass_converted_after_its_base_shows_its_own_fields() -> None:
    @record
    class Base(Record):
        a: int = 1

    @record
    class Child(Base):
        b: int = 2

    assert [f.name for f in dataclasses.fields(Base)] == ["a"]  # the base first
    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b"]
    assert dataclasses.asdict(Child()) == {"a": 1, "b": 2}
