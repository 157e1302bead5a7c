"""The mirror of the one-message rules: per enabled rule, the negation of its condition on
the Struct (`_local` for a message, `_block_ok` for a block, `_priced` for the pricing
rules), and the same over a whole batch in one tight loop (`_columns`). A mixin of
`FastPath`, which sets the attributes declared here.

A rule has a predicate here exactly when its registration says `fast="local"`
(`engine.FastProof`); each predicate reads the rule's switch by its `RuleInfo`,
`on[R.RULE.id]`, never by a written id (tests/test_fast_path.py checks both)."""

from __future__ import annotations

import binascii
import operator
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from .. import rules as R
from ..engine import FAMILIES, Prices, Tools
from ..invariants import EMAIL, file_ref_problem, url_ok
from ..pricing import TERMS, USAGE_BUCKETS, ScaledRates, total_of
from ..tools import SNAKE_NAME
from .batch import BatchPattern, Columns, column
from .blocks import _shallow
from .compiled import function as _compiled
from .sessions import SessionItem

_UNSET = msgspec.UNSET
# the batch loop compiled (`_walk.c`), or None: `_walk_py` runs
_COMPILED = _compiled("walk")
# the pricing loop compiled (`_walk.c`), or None: `_priced_py` runs
_PRICED = _compiled("priced")
# the tool ids of a batch's kept tool blocks compiled (`_walk.c`), or None: `tool_ids_py` runs
_TOOL_IDS = _compiled("tool_ids")
# what the compiled pricing loop reads of a usage, in this order: its version, each count
# of `total_of` (`pricing.TERMS`), its stored cost
USAGE_READS = ("pricing_version", *(count for count, _rate in TERMS), "cost_usd")
# the pricing rules whose predicates `_walk.priced` computes without calling `_priced`
PRICED_RULES = frozenset(r.id for r in (R.COST_MISMATCH, R.PRICING_VERSION, R.PRICING_MODEL, R.PRICING_BUCKET))


def priced_compiles(on: dict[str, bool]) -> bool:
    """True when `_walk.priced` may stand for `_priced` in a run: no rule of `pricing.py`
    but `PRICED_RULES` is enabled (`new-rule` writes a pricing rule's predicate into
    `_priced`, which only `_priced_py` calls on every message)."""
    module = total_of.__module__
    return not any(
        on.get(info.id) and info.id not in PRICED_RULES
        for fam in FAMILIES
        for info, _blocks, fn in fam.rules
        if fn.__module__ == module
    )


# the token counts of the buckets of `USAGE_BUCKETS` (cached reads, cache writes), in C
_BUCKET_COUNTS = operator.attrgetter(*(bucket for bucket, _rate in USAGE_BUCKETS))


def _b64_ok(data: str) -> bool:
    try:
        binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):
        return False
    return True


# new-rule: scaffolded rules' clearing functions go below this line (python -m conformance.dev new-rule)


class Mirror:
    """The one-message rules' predicates (`FastPath` sets what they read)."""

    on: dict[str, bool]  # rule id -> enabled in the run
    cls: _Classes
    toolset: Tools | None
    prices: Prices | None
    re_tool_id: Callable[[str], Any]
    tool_id_pattern: BatchPattern | None
    tool_name_pattern: BatchPattern | None
    _stop: Callable[[Any], Any] | None
    _providers: dict[str, str]
    _price_plans: dict[tuple[str, Any], bool | tuple[bool, bool, ScaledRates | None]]
    priced_compiles: bool  # `priced_compiles(on)`
    _tool_checks: dict[str, Any]  # tool name -> `_tool_check(name)`, for the tools met

    def _open_fields_shallow(self, m: Any) -> bool:
        """The depth check of the fields of arbitrary JSON (`OPEN_FIELDS`): `provider_raw`
        and every tool input, inside tool results too."""
        raw = m.metadata.provider_raw
        if raw is not None and raw is not _UNSET and not _shallow(raw):
            return False
        tool_use, tool_result = self.cls.tool_use, self.cls.tool_result
        for b in m.content:
            t = type(b)
            if t is tool_use:
                if not _shallow(b.input):
                    return False
            elif t is tool_result:
                for inner in b.content:
                    if type(inner) is tool_use and not _shallow(inner.input):
                        return False
        return True

    def _columns(self, cols: Columns, ats: list[Any], suspects: set[int]) -> dict[int, list[tuple[int, bool, str]]]:
        """The one-message rules of `_local` over a batch in one tight loop (`_walk_py`, or
        its compiled transliteration `_walk.walk`): adds to `suspects` every message on
        which `_local` might return None, and a few on which it would not (anything out of
        the ordinary: `_local` judges those one at a time with the run's selection), and
        returns the tool blocks (`SessionItem.tools`) of the other messages that have any.
        The tool id and name formats are checked per batch. Only complete messages are
        batched."""
        metas = cols.raw(("metadata",))
        ctx = self._walk_context()
        tools: dict[int, list[tuple[int, bool, str]]]
        if _COMPILED is not None:
            tools, uses, use_owner = _COMPILED(cols.msgs, metas, ats, suspects, ctx)
        else:
            tools, uses, use_owner = _walk_py(cols.msgs, metas, ats, suspects, ctx)
        add = suspects.add
        # the tool ids (TS112) of the messages kept, and the names of every call (TS306)
        checks: list[tuple[BatchPattern | None, list[str], list[int]]] = []
        if self.tool_id_pattern is not None:
            ids, owners = (_TOOL_IDS or tool_ids_py)(tools)
            checks.append((self.tool_id_pattern, ids, owners))
        if self.tool_name_pattern is not None:
            checks.append((self.tool_name_pattern, column(uses, "name"), use_owner))
        for pattern, values, owner in checks:
            assert pattern is not None
            for j in pattern.bad(values):
                add(owner[j])
                tools.pop(owner[j], None)
        if self.prices is not None:
            if _PRICED is not None and self.priced_compiles:
                _PRICED(
                    metas, suspects, self._price_plans, self._priced, _UNSET, self.on[R.PRICING_BUCKET.id], USAGE_READS
                )
            else:
                _priced_py(metas, suspects, self._priced)
        return tools

    def _walk_context(self) -> WalkContext:
        """What the batch loop reads of the run (`WalkContext`)."""
        cls = self.cls
        return (
            _UNSET,
            cls.tool_use,
            cls.tool_result,
            cls.special,
            cls.nested,
            cls.media,
            cls.allowed if self.on[R.ROLE_CONTENT.id] else None,
            self._stop if self.on[R.CANCELLED_STATUS.id] else None,
            EMAIL if self.on[R.ID_EMAIL.id] else None,
            self._block_ok,
            None if self.toolset is None else self._tool_checks,
            self._provider_of,
            self._providers,
            _shallow,
            self._inner_ok,
        )

    def _inner_ok(self, inner: list[Any]) -> bool:
        """True when no block rule may report on the blocks inside a tool_result that the
        driver runs them on (`_Classes.nested`: media and tool_use, whose input must be
        shallow too)."""
        block_ok, nested, tool_use = self._block_ok, self.cls.nested, self.cls.tool_use
        return all(block_ok(x) and (type(x) is not tool_use or _shallow(x.input)) for x in inner if type(x) in nested)

    def _provider_of(self, model: str) -> str:
        """The part of a model id before its first colon (TS109), kept per distinct id: a
        run meets a handful of models, each on many messages."""
        got = self._providers.get(model)
        if got is None:
            got = model.split(":", 1)[0]
            if len(self._providers) < 4096:
                self._providers[model] = got
        return got

    # -- one message ----------------------------------------------------------------------

    def _local(self, m: Any, at: Any, line_no: int) -> SessionItem | None:
        """The session view of `m` when no enabled one-message rule can report on it, else
        None. The string formats were checked per batch (`_formats`); `at` is the parsed
        `created_at` (None if it is not a real date and time)."""
        on = self.on
        meta = m.metadata
        status = meta.status
        complete = status is _UNSET or status == "complete"
        if at is None and on[R.CREATED_AT_REAL.id]:
            return None
        role = m.role
        content = m.content
        model = meta.model
        model = None if model is _UNSET else model
        provider = meta.provider
        provider = None if provider is _UNSET else provider
        # the model id format (TS108) was checked per batch: a model here matches it
        if (
            model is not None
            and provider is not None
            and on[R.MODEL_PROVIDER.id]
            and self._provider_of(model) != provider
        ):
            return None
        if on[R.CANCELLED_STATUS.id] and getattr(meta, "stop_reason", None) == "cancelled" and status != "cancelled":
            return None
        if on[R.ID_EMAIL.id]:
            for pseudonym in (meta.user_id, meta.team_id):
                if isinstance(pseudonym, str) and "@" in pseudonym and EMAIL.search(pseudonym):
                    return None
        cls = self.cls
        if not self._open_fields_shallow(m):
            return None  # TS008 territory: the exact path decides
        tools: list[tuple[int, bool, str]] = []
        for i, b in enumerate(content):
            t = type(b)
            if t is cls.tool_use:
                tools.append((i, True, b.id))
            elif t is cls.tool_result:
                tools.append((i, False, b.tool_use_id))
        if complete:
            if not content:
                if role != "system" and on[R.EMPTY_CONTENT.id]:
                    return None
            elif on[R.ROLE_CONTENT.id]:
                allowed = cls.allowed[role]
                for b in content:
                    if type(b) not in allowed:
                        return None
            if role == "assistant":
                if on[R.ASSISTANT_MODEL.id] and (model is None or provider is None):
                    return None
                routing = meta.routing
                if routing is _UNSET or routing is None:
                    if on[R.ASSISTANT_ROUTING.id]:
                        return None
                elif on[R.ROUTING_MODEL.id] and model is not None and routing.chosen_model != model:
                    return None
                if on[R.ASSISTANT_USAGE.id] and (meta.usage is _UNSET or meta.usage is None):
                    return None
            elif role == "tool":
                if on[R.TOOL_ONE_BLOCK.id] and len(content) != 1:
                    return None
                parent = meta.parent_tool_use_id
                if parent is _UNSET or parent is None:
                    if on[R.TOOL_PARENT.id]:
                        return None
                elif on[R.TOOL_PARENT_MATCH.id]:
                    for b in content:
                        if type(b) is cls.tool_result and b.tool_use_id != parent:
                            return None
            for b in content:
                if not self._block_ok(b):
                    return None
        # new-rule: scaffolded predicates go below this line (python -m conformance.dev new-rule)
        if self.prices is not None and not self._priced(meta, model):
            return None
        return SessionItem(
            line_no, m.id, m.session_id, m.created_at, at, complete, tools, role, "complete" if complete else status
        )

    def _block_ok(self, b: Any, formats: bool = True) -> bool:
        """False when a block rule of a complete message may report on block `b` (but for
        a tool_use's id and name formats without `formats`: `_columns` checks those per
        batch)."""
        on, cls = self.on, self.cls
        t = type(b)
        # new-rule: scaffolded predicates go below this line (python -m conformance.dev new-rule)
        if t is cls.tool_use:
            if formats and on[R.TOOL_ID_FORMAT.id] and not self.re_tool_id(b.id):
                return False
            if formats and on[R.TOOL_USE_NAME.id] and not SNAKE_NAME.match(b.name):
                return False
            if self.toolset is not None and (on[R.TOOL_UNKNOWN.id] or on[R.TOOL_INPUT.id]):
                check = self._tool_checks.get(b.name)
                return _verdict(self._tool_check(b.name) if check is None else check, b)
            return True
        if t is cls.tool_result:
            if on[R.TOOL_ID_FORMAT.id] and not self.re_tool_id(b.tool_use_id):
                return False
            # inside a tool_result the driver runs the rules of image, audio and tool_use
            return all(self._block_ok(inner) for inner in b.content if type(inner) in cls.nested)
        if t in cls.media:
            if on[R.IMAGE_MEDIA_TYPE.id] and t is cls.image and not b.media_type.lower().startswith("image/"):
                return False
            source = b.source
            if source.kind == "file_ref" and on[R.FILE_REF_PATH.id] and file_ref_problem(source.data):
                return False
            if source.kind == "url" and on[R.URL_DATA.id] and not url_ok(source.data):
                return False
            return not (source.kind == "base64" and on[R.BASE64_DATA.id] and not _b64_ok(source.data))
        return True

    def _tool_check(self, name: str) -> Any:
        """What `_block_ok` decides of a tool_use named `name` once its id and name formats
        hold: False where TS304 (an unknown tool) or TS305 (its input schema unusable) may
        report, else True or the `is_valid` of its input's validator (TS305 on the input).
        Kept per known tool in `_tool_checks`, which the batch loop reads first."""
        on, ts = self.on, self.toolset
        assert ts is not None
        if name not in ts.tools:
            return not on[R.TOOL_UNKNOWN.id]
        check: Any = True
        if on[R.TOOL_INPUT.id]:
            fast, _oracle, problem = ts.validators(name)
            check = False if problem is not None else True if fast is None else fast.is_valid
        self._tool_checks[name] = check
        return check

    def _priced(self, meta: Any, model: Any) -> bool:
        """False when a pricing rule (TS401-TS404) may report on this message."""
        usage = meta.usage
        if usage is _UNSET or usage is None:
            return True
        on = self.on
        # new-rule: scaffolded predicates go below this line (python -m conformance.dev new-rule)
        key = (usage.pricing_version, model)
        plan = self._price_plans.get(key)
        if plan is None:
            plan = self._price_plan(*key)
        if type(plan) is bool:  # no rates for this version and model: TS401 or TS402
            return plan
        no_cached_rate, no_created_rate, scaled = plan
        cached, created = _BUCKET_COUNTS(usage)
        cached = 0 if cached is _UNSET else cached
        created = 0 if created is _UNSET else created
        if (cached and no_cached_rate) or (created and no_created_rate):
            return not on[R.PRICING_BUCKET.id]  # TS403
        if scaled is None:  # TS404 is off
            return True
        # the cost and the stored value compared exactly, as integers: the rates scaled by
        # a power of ten (`PriceTable.scaled`), the stored plain decimal read as its digits
        whole, _, frac = usage.cost_usd.partition(".")
        digits = whole + frac
        if not (digits.isascii() and digits.isdigit()):
            return False  # not a plain decimal (TS020's to report): the exact path says where
        total = total_of(scaled.ints, usage.input_tokens, usage.output_tokens, cached, created, 0)
        return bool(int(digits) * scaled.scale == total * 10 ** len(frac))

    def _price_plan(self, version: str, model: Any) -> bool | tuple[bool, bool, ScaledRates | None]:
        """What `_priced` needs of one pricing version and model, looked up once per pair
        (kept in `_price_plans`, a few thousand at most): the verdict when the table has
        no rates for them (False where TS401 or TS402 may report), else whether each
        bucket of `USAGE_BUCKETS` lacks its rate and, when TS404 is on, the rates scaled
        to integers."""
        prices, on = self.prices, self.on
        assert prices is not None
        table = prices.versions.get(version)
        plan: bool | tuple[bool, bool, ScaledRates | None]
        if table is None:
            plan = not on[R.PRICING_VERSION.id]
        elif model not in table:
            plan = not on[R.PRICING_MODEL.id]
        else:
            rates = table[model]
            no_cached_rate, no_created_rate = (rate not in rates for _bucket, rate in USAGE_BUCKETS)
            scaled = prices.scaled(version, model) if on[R.COST_MISMATCH.id] else None
            plan = (no_cached_rate, no_created_rate, scaled)
        if len(self._price_plans) < 4096:
            self._price_plans[(version, model)] = plan
        return plan


def tool_ids_py(tools: dict[int, list[tuple[int, bool, str]]]) -> tuple[list[str], list[int]]:
    """The ids of the tool blocks `_walk_py` kept, in order, and the message of each."""
    return [tid for found in tools.values() for _i, _use, tid in found], [
        k for k, found in tools.items() for _ in found
    ]


def _priced_py(metas: list[Any], suspects: set[int], priced: Callable[[Any, Any], bool]) -> None:
    """The pricing loop of `Mirror._columns`: adds to `suspects` each message with a usage
    on which a pricing rule may report (`priced`: `Mirror._priced`). `_walk.priced` is
    this loop with `_priced`'s common case compiled: exact integers that fit in 128 bits,
    a plan already made; anything else it asks `priced` (tests/test_fast_walk.py)."""
    add = suspects.add
    for k, meta in enumerate(metas):
        usage = meta.usage
        if usage is not _UNSET and usage is not None and k not in suspects:
            model = meta.model
            if not priced(meta, None if model is _UNSET else model):
                add(k)


def _tool_ok(b: Any, tool_checks: dict[str, Any], block_ok: Callable[[Any, bool], bool]) -> bool:
    """`block_ok(b, False)` for a tool_use `b`, read off the verdict kept for its name
    (`Mirror._tool_check`) where there is one."""
    check = tool_checks.get(b.name)
    return block_ok(b, False) if check is None else _verdict(check, b)


def _verdict(check: Any, b: Any) -> bool:
    """A kept tool verdict (`Mirror._tool_check`) on the tool_use `b`: itself, or its
    validator's answer on the input."""
    return check if type(check) is bool else bool(check(b.input))


# what `_walk_py` (and `_walk.walk`) read of the run, in this order (`Mirror._walk_context`)
WalkContext = tuple[
    Any,
    Any,
    Any,
    frozenset[type],
    frozenset[type],
    frozenset[type],
    Any,
    Any,
    Any,
    Any,
    Any,
    Any,
    dict[str, str],
    Any,
    Any,
]


def _walk_py(
    msgs: list[Any], metas: list[Any], ats: list[Any], suspects: set[int], ctx: WalkContext
) -> tuple[dict[int, list[tuple[int, bool, str]]], list[Any], list[int]]:
    """The batch loop of `Mirror._columns`: adds the messages it cannot clear to
    `suspects`; returns the tool blocks of the others, every tool_use block met (their
    names: TS306) and the message of each. `_walk.c` is this function, compiled: edit
    both, and tests/test_fast_walk.py compares them."""
    (
        _unset, tool_use, tool_result, special, nested, media, allowed, stop, email,
        block_ok, tool_checks, prefix, providers, shallow, inner_ok,
    ) = ctx  # fmt: skip
    known = providers.get  # model id -> its provider part
    tools: dict[int, list[tuple[int, bool, str]]] = {}
    uses: list[Any] = []
    use_owner: list[int] = []
    add = suspects.add
    for k, m in enumerate(msgs):
        meta = metas[k]
        status = meta.status
        if (status is not _UNSET and status != "complete") or ats[k] is None:
            add(k)  # not complete (its own rules), or TS115
            continue
        if email is not None:
            user, team = meta.user_id, meta.team_id
            if (user and "@" in user) or (team and "@" in team):
                add(k)  # TS121: `_local` decides
                continue
        role = m.role
        model = meta.model
        if role == "assistant":  # TS104-TS107 and TS109
            provider, routing = meta.provider, meta.routing
            if (
                model is _UNSET or model is None or provider is _UNSET or provider is None
                or routing is _UNSET or routing is None or routing.chosen_model != model
                or meta.usage is _UNSET or meta.usage is None or (known(model) or prefix(model)) != provider
            ):  # fmt: skip
                add(k)
                continue
        elif model is not _UNSET and model is not None:  # TS109 elsewhere
            provider = meta.provider
            if provider is not _UNSET and provider is not None and (known(model) or prefix(model)) != provider:
                add(k)
                continue
        if stop is not None and stop(meta) == "cancelled":
            add(k)  # TS119: a complete message with a cancelled stop
            continue
        raw = meta.provider_raw
        if raw is not _UNSET and raw is not None and not shallow(raw):
            add(k)
            continue
        content = m.content
        if role == "tool":  # TS103, TS110, TS111
            if len(content) != 1:
                add(k)
                continue
            b = content[0]
            tid = b.tool_use_id if type(b) is tool_result else None
            if (
                tid is None
                or tid != meta.parent_tool_use_id
                or (allowed is not None and tool_result not in allowed[role])
            ):
                add(k)
                continue
            # its one block taken here as the loop below takes a tool_result: the
            # common tool message costs no loop
            inner = b.content
            if inner and not nested.isdisjoint(map(type, inner)) and not inner_ok(inner):
                add(k)
            else:
                tools[k] = [(0, False, tid)]
            continue
        elif not content:
            if role != "system":
                add(k)  # TS101
            continue
        ok_types = None if allowed is None else allowed[role]
        if len(content) == 1:  # one plain block (the common case): no loop
            t = type(content[0])
            if t not in special:
                if ok_types is not None and t not in ok_types:
                    add(k)  # TS102
                continue
        found: list[tuple[int, bool, str]] | None = None
        for i, b in enumerate(content):
            t = type(b)
            if ok_types is not None and t not in ok_types:
                break  # TS102
            if t not in special:
                continue
            if t is tool_use:
                if not shallow(b.input) or (tool_checks is not None and not _tool_ok(b, tool_checks, block_ok)):
                    break
                uses.append(b)
                use_owner.append(k)
                entry = (i, True, b.id)
            elif t is tool_result:
                inner = b.content
                if inner and not nested.isdisjoint(map(type, inner)) and not inner_ok(inner):
                    break
                entry = (i, False, b.tool_use_id)
            else:
                if t in media and not block_ok(b):
                    break
                continue
            if found is None:
                found = [entry]
            else:
                found.append(entry)
        else:
            if found is not None:
                tools[k] = found
            continue
        add(k)
    return tools, uses, use_owner


@dataclass(frozen=True)
class _Classes:
    # the generated Struct classes (typed Any: their fields are known only at run time)
    tool_use: Any
    tool_result: Any
    image: Any
    media: frozenset[type]  # image and audio blocks
    nested: frozenset[type]  # the block types whose rules also run inside a tool_result
    special: frozenset[type]  # the block types `_columns` looks into: tool blocks and media
    allowed: dict[str, frozenset[type]]  # role -> block classes allowed (§5.1.3)


def _block_classes(model: Any) -> _Classes:
    union = typing.get_type_hints(model)["content"].__args__[0]
    by_tag: dict[str, type] = {cls.__struct_config__.tag: cls for cls in union.__args__}
    media = frozenset(by_tag[t] for t in ("image", "audio") if t in by_tag)
    allowed = {role: frozenset(by_tag[t] for t in blocks if t in by_tag) for role, blocks in R.ALLOWED_BLOCKS.items()}
    return _Classes(
        tool_use=by_tag["tool_use"],
        tool_result=by_tag["tool_result"],
        image=by_tag.get("image"),
        media=media,
        nested=media | {by_tag["tool_use"]},
        special=media | {by_tag["tool_use"], by_tag["tool_result"]},
        allowed=allowed,
    )
