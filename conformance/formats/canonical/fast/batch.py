"""The batch-regex compiler of the fast path: an anchored schema pattern checked over a
whole column of values with one call (`BatchPattern`: one regex over the values joined
by newlines, or a byte translation for a fixed-width one, `FixedWidth`), the columns of
a batch of Structs each read once (`Columns`), and `created_at` parsed per column
(`times`)."""

from __future__ import annotations

import operator
import re
import typing
from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec

from ..invariants import parse_created_at
from .compiled import function as _compiled

_UNSET = msgspec.UNSET
# `column_py` and `present_py` compiled, or None
_COLUMN = _compiled("column")
_PRESENT = _compiled("present")

_fromiso = datetime.fromisoformat
_CREATED = operator.attrgetter("created_at")


def times(created: list[str]) -> tuple[list[Any], bool]:
    """The parsed `created_at` of each value (None where it is not a real date and time),
    as `parse_created_at` parses them (Python >= 3.11 reads the `Z` itself), and whether
    every one is real."""
    try:
        return list(map(_fromiso, created)), True
    except ValueError:
        ats = [parse_created_at(c) for c in created]
        return ats, None not in ats


_END = "(?![\\s\\S])"  # end of input, as the schemas write it


def _batchable(body: str) -> bool:
    """True when `body` cannot match a newline (so values joined by newlines are checked
    one by one by a single regex): no `.`, no escape that matches a newline outside a
    negated class, no negated class that lets a newline through, no group but `(?:`."""
    i, in_class, negated, has_space = 0, False, False, False
    while i < len(body):
        c = body[i]
        if c == "\\":
            e = body[i + 1 : i + 2]
            if e.isdigit() or e in ("D", "W", "n", "x", "u", "U", "N", "Z", "A", "b", "B"):
                return False
            if e == "s":
                if not (in_class and negated):
                    return False
                has_space = True
            i += 2
            continue
        if in_class:
            if c == "]":
                if negated and not has_space:
                    return False
                in_class = False
        elif c == "[":
            in_class, negated, has_space = True, body[i + 1 : i + 2] == "^", False
            if negated:
                i += 1
        elif c == "." or (c == "(" and body[i + 1 : i + 2] == "?" and body[i + 2 : i + 3] != ":") or c in "^$":
            return False
        i += 1
    return not in_class


def _uncaptured(body: str) -> str:
    """`body` (a `_batchable` one: no back reference) with its capturing groups made
    non-capturing: the same language, and Python's matcher skips the group bookkeeping
    (the schema's `created_at` pattern checks 40% faster)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(body):
        c = body[i]
        if c == "\\":
            out.append(body[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]" or body[i - 1] == "[" or body[i - 2 : i] == "[^"
        elif c == "[":
            in_class = True
        elif c == "(" and body[i + 1 : i + 2] != "?":
            c = "(?:"
        out.append(c)
        i += 1
    return "".join(out)


class BatchPattern:
    """One anchored pattern (`^...` to end of input, as the schemas write them, or `...\\Z`)
    checked over a whole batch of values with one call when it can be: a pattern of
    fixed width (`FixedWidth`) by a byte translation, another `_batchable` one by one
    regex over the values joined by newlines. A column whose values repeat (a model
    id) is checked on its distinct values."""

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.pattern = regex.pattern
        self.one = regex.search
        src = regex.pattern
        body: str | None = None
        if src.startswith("^") and src.endswith(_END):
            body = src[1 : -len(_END)]
        elif src.endswith("\\Z") and not src.endswith("\\\\Z"):
            body = src[:-2]  # a `match` pattern (invariants.CANONICAL_TIME, tools.SNAKE_NAME)
            self.one = regex.match
        self.all = (
            re.compile(f"(?:(?:{_uncaptured(body)})\n)*", regex.flags).fullmatch
            if body is not None and _batchable(body)
            else None
        )
        classes = None if body is None or regex.flags & re.IGNORECASE else _fixed_classes(body)
        self.fixed = None if classes is None else FixedWidth(classes)
        self.repeats = True  # the values seen so far repeat: check the distinct ones

    def bad(self, values: list[str]) -> list[int]:
        """The indices of the values that do not match."""
        if not values:
            return []
        if self.repeats:
            distinct = list(set(values))
            if 2 * len(distinct) > len(values):
                self.repeats = False  # mostly distinct: not worth the set from now on
            if self._all(distinct):
                return []
        elif self._all(values):
            return []
        one = self.one
        return [i for i, v in enumerate(values) if not one(v)]

    def _all(self, values: list[str]) -> bool:
        """True when every value matches (False: some may not)."""
        if self.fixed is not None:
            return self.fixed.all(values)
        if self.all is not None:
            joined = "\n".join(values) + "\n"
            return joined.count("\n") == len(values) and self.all(joined) is not None
        return False


def _fixed_classes(body: str) -> list[frozenset[int]] | None:
    """The pattern `body` as the ASCII bytes allowed at each position, when it is a fixed
    sequence of literal characters and classes (`[...]` with ranges, no negation), each
    perhaps repeated `{n}` times, with at most 8 distinct classes (a bit each in
    `FixedWidth`); None for anything else (the regex checks it)."""
    out: list[frozenset[int]] = []
    i = 0
    while i < len(body):
        c = body[i]
        chars: set[str] = set()
        if c == "[":
            i += 1
            if body[i : i + 1] in ("^", "]", ""):
                return None
            while body[i : i + 1] != "]":
                lo, i = _class_char(body, i)
                if lo is None:
                    return None
                if body[i : i + 1] == "-" and body[i + 1 : i + 2] not in ("]", ""):
                    hi, i = _class_char(body, i + 1)
                    if hi is None or hi < lo:
                        return None
                    chars.update(map(chr, range(ord(lo), ord(hi) + 1)))
                else:
                    chars.add(lo)
            i += 1
        elif c == "\\":
            e = body[i + 1 : i + 2]
            if not e or e.isalnum():
                return None  # a class escape (\d, \s, ...) or an anchor
            chars.add(e)
            i += 2
        elif c in ".^$|()?*+{}":
            return None
        else:
            chars.add(c)
            i += 1
        count = 1
        m = _REPEAT.match(body, i)
        if m:
            count, i = int(m.group(1)), m.end()
        if not all(ch.isascii() and ch != "\n" for ch in chars):
            return None
        out += [frozenset(map(ord, chars))] * count
    return out if 0 < len(out) <= 256 and len(set(out)) <= 8 else None


def _class_char(body: str, i: int) -> tuple[str | None, int]:
    """The character at `body[i]` inside a class (an escaped one too), and where the
    next begins; None for a class escape or an unfinished class."""
    c = body[i : i + 1]
    if c == "\\":
        e = body[i + 1 : i + 2]
        return (None, i) if not e or e.isalnum() else (e, i + 2)
    if c in ("", "["):
        return None, i
    return c, i + 1


_REPEAT = re.compile(r"\{(\d{1,3})\}")


class FixedWidth:
    """A fixed-width pattern of ASCII classes (`_fixed_classes`) checked over a batch in
    C, the values joined by newlines. When the largest classes of the pattern are
    disjoint (each class then lies in exactly one of them: digits, a literal `-`, the
    ULID alphabet), one byte translation maps every byte to the first member of the
    largest class it belongs to (bytes of none to 0xff), and the batch matches the
    pattern's largest classes exactly when the translation equals the template (that
    first member at each position, a newline after each value) repeated once per value;
    a position whose class is smaller (a ULID's first character, 0-7) is then checked
    alone, its column cut out of the batch (one slice) and its class's bytes deleted
    from it (nothing may be left). With the length of the whole equal to
    `(width + 1) * n`, that proves each value matches: no class holds a newline, so the
    n newlines the join put in sit exactly at the separators' positions, and each value
    is `width` characters long. Patterns whose largest classes overlap are checked with
    a bit per class (`_bits`)."""

    def __init__(self, classes: list[frozenset[int]]) -> None:
        self.width = len(classes)
        kinds = set(classes)
        top = [k for k in kinds if not any(k < other for other in kinds)]
        self.disjoint = all(a.isdisjoint(b) for a in top for b in top if a is not b)
        self.repeated = b""  # `template` repeated, for the largest batch so far
        if self.disjoint:
            table = bytearray(b"\xff" * 256)
            table[ord("\n")] = ord("\n")
            owner: dict[frozenset[int], frozenset[int]] = {}
            for k in top:
                for ch in k:
                    table[ch] = min(k)
            for k in kinds:
                owner[k] = next(t for t in top if k <= t)
            self.table = bytes(table)
            self.template = bytes(min(owner[k]) for k in classes) + b"\n"
            # (position, the bytes of its class) where the class is smaller than its largest
            self.narrower = [(p, bytes(sorted(k))) for p, k in enumerate(classes) if k != owner[k]]
        else:
            self._bits(classes, kinds)

    def _bits(self, classes: list[frozenset[int]], kinds: set[frozenset[int]]) -> None:
        """Each byte translated to a bit of each class it belongs to, which must carry at
        every position of a value the bit of that position's class (one integer AND over
        the whole batch)."""
        bit = {k: 1 << n for n, k in enumerate(sorted(kinds, key=sorted))}  # one bit per class (8 at most)
        table = bytearray(256)
        for k, b in bit.items():
            for ch in k:
                table[ch] |= b
        self.table = bytes(table)
        self.template = bytes(bit[k] for k in classes) + b"\0"  # a separator: any byte
        self.masks: dict[int, int] = {}

    def all(self, values: list[str]) -> bool:
        """True when every value matches (False: some may not)."""
        n = len(values)
        joined = "\n".join(values) + "\n"
        if len(joined) != (self.width + 1) * n:
            return False
        try:
            data = joined.encode("ascii")
        except UnicodeEncodeError:
            return False
        if not self.disjoint:
            mask = self.masks.get(n)
            if mask is None:
                mask = int.from_bytes(self.template * n, "big")
                if len(self.masks) < 4096:
                    self.masks[n] = mask
            return int.from_bytes(data.translate(self.table), "big") & mask == mask
        if len(self.repeated) < len(data):  # the template once per value, for this batch and smaller ones
            self.repeated = self.template * n
        if not self.repeated.startswith(data.translate(self.table)):
            return False
        step = self.width + 1
        return all(not data[p::step].translate(None, members) for p, members in self.narrower)


def _always_set(model: Any, path: tuple[str, ...]) -> bool:
    """True when every message of the Struct class `model` has a value (not UNSET, not
    None) at `path`: each step a required field whose type does not admit None."""
    cls = model
    for name in path:
        info = {f.name: f for f in msgspec.structs.fields(cls)}.get(name)
        if info is None or not info.required:
            return False
        t = info.type
        while typing.get_origin(t) is typing.Annotated:
            t = typing.get_args(t)[0]
        if t is None or type(None) in typing.get_args(t):
            return False
        cls = t
    return True


class Columns:
    """The fields of one batch of Structs, each read once (one pass in C) and shared by
    the format checks and `_columns`."""

    __slots__ = ("_present", "_raw", "always", "msgs")

    def __init__(self, msgs: list[Any], always: frozenset[tuple[str, ...]] = frozenset()) -> None:
        self.msgs = msgs
        self.always = always  # paths every message has a value at (`_always_set`): nothing to filter
        self._raw: dict[tuple[str, ...], list[Any]] = {}
        self._present: dict[tuple[str, ...], tuple[list[int] | None, list[Any]]] = {}

    def raw(self, path: tuple[str, ...]) -> list[Any]:
        """The value at `path` of every message (UNSET or None where it has none); every
        step before the last must lead to a value on every message."""
        got = self._raw.get(path)
        if got is None:
            idx, parents = self.present(path[:-1]) if len(path) > 1 else (None, self.msgs)
            if idx is not None:
                raise ValueError(f"{'.'.join(path[:-1])} is not on every message")
            got = self._raw[path] = column(parents, path[-1])
        return got

    def present(self, path: tuple[str, ...]) -> tuple[list[int] | None, list[Any]]:
        """(indices, values) of the messages on which `path` leads to a value (not UNSET
        or None); indices None: every message, in order."""
        got = self._present.get(path)
        if got is None and path in self.always:
            got = self._present[path] = (None, self.raw(path))
        if got is None:
            idx, parents = self.present(path[:-1]) if len(path) > 1 else (None, self.msgs)
            values = self.raw(path) if idx is None else column(parents, path[-1])
            cut = _PRESENT(values, _UNSET) if _PRESENT is not None else present_py(values)
            if cut is not None:
                keep, values = cut
                idx = keep if idx is None else [idx[k] for k in keep]
            got = self._present[path] = (idx, values)
        return got


def column(objs: list[Any], name: str) -> list[Any]:
    """The field `name` of every object (`column_py`, compiled where it was built:
    `compiled`, `_walk.c`)."""
    return _COLUMN(objs, name) if _COLUMN is not None else column_py(objs, name)


def column_py(objs: list[Any], name: str) -> list[Any]:
    return list(map(_attr(name), objs))


def present_py(values: list[Any]) -> tuple[list[int], list[Any]] | None:
    """None when every value is set (not UNSET, not None), else the indices of those that
    are, and their values."""
    if _UNSET in values or None in values:
        keep = [k for k, v in enumerate(values) if v is not None and v is not _UNSET]
        return keep, [values[k] for k in keep]
    return None


_ATTRS: dict[str, Callable[[Any], Any]] = {}


def _attr(name: str) -> Callable[[Any], Any]:
    got = _ATTRS.get(name)
    if got is None:
        got = _ATTRS[name] = operator.attrgetter(name)
    return got
