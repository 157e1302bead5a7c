"""Costs recomputed from the local price table (spec §6.4, adapter contract §7.1).

All arithmetic is `Decimal`: YAML and JSON numbers are read through their decimal text,
never through a float, so 0.30 stays 0.30.
"""

from __future__ import annotations

import decimal
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation, localcontext
from pathlib import Path
from typing import Any, TypeVar

import jiter

from ...core import pointers
from ...core.errors import InputError
from ...core.schema_validation import SchemaValidator
from ...core.schemas import schema_set
from . import rules as R
from .engine import MESSAGE, Context, Emit, MessageView, Prices
from .files import read_regular

MTOK = Decimal(1_000_000)
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_ZERO = Decimal(0)


@dataclass(frozen=True)
class PriceTable:
    """pricing_version -> model id -> rate name -> USD per million tokens."""

    versions: dict[str, dict[str, dict[str, Decimal]]]
    _scaled: dict[tuple[str, str], ScaledRates] = field(default_factory=dict, compare=False, repr=False)

    def cost(self, version: str, model: str, usage: dict[str, Any]) -> Decimal:
        """The exact cost of `usage`: products and sums of exact values in a context whose
        precision cannot round (token counts may be any JSON integer, 10**400 included),
        and `scaleb` divides by 10^6 exactly."""
        with localcontext(_EXACT):
            return self._cost(version, model, usage)

    def _cost(self, version: str, model: str, usage: dict[str, Any]) -> Decimal:
        total = total_of(
            self.versions[version][model],
            usage["input_tokens"],
            usage["output_tokens"],
            usage.get("cached_input_tokens", 0),
            usage.get("cache_creation_input_tokens", 0),
            _ZERO,
        )
        return total.scaleb(-6)

    def scaled(self, version: str, model: str) -> ScaledRates:
        """The rates of `model` in `version` as integers, each times `10**places`: the
        cost of a usage is `total_of` those and its token counts, over `scale`
        (`10**(places + 6)`), exactly (the fast path compares costs so, in integers)."""
        got = self._scaled.get((version, model))
        if got is None:
            rates = self.versions[version][model]
            places = max((-int(r.as_tuple().exponent) for r in rates.values() if r.is_finite()), default=0)
            places = max(places, 0)
            with localcontext(_EXACT):
                ints = {name: int(r.scaleb(places)) for name, r in rates.items()}
            got = self._scaled[(version, model)] = ScaledRates(ints, 10 ** (places + 6))
        return got

    def rates(self, usage: dict[str, Any], model: Any) -> dict[str, Decimal] | None:
        table = self.versions.get(usage["pricing_version"])
        return None if table is None or model not in table else table[model]


@dataclass(frozen=True)
class ScaledRates:
    """A model's rates as integers (`PriceTable.scaled`): cost = `total_of(ints, ...) / scale`."""

    ints: dict[str, int]
    scale: int

    @property
    def terms(self) -> tuple[int | None, ...]:
        """The rate of each term of `total_of`, in `TERM_RATES` order (None where the table
        has none): what the fast path's compiled pricing loop reads (`fast/_walk.c: priced`,
        once per price plan a batch meets)."""
        return tuple(self.ints.get(name) for name in TERM_RATES)


N = TypeVar("N", Decimal, int)

USAGE_BUCKETS = (
    ("cached_input_tokens", "cached_read_per_mtok_usd"),
    ("cache_creation_input_tokens", "cache_write_per_mtok_usd"),
)
# the terms of `total_of` in its order: each token count of a usage and its rate
TERMS = (("input_tokens", "input_per_mtok_usd"), ("output_tokens", "output_per_mtok_usd"), *USAGE_BUCKETS)
TERM_RATES = tuple(rate for _count, rate in TERMS)
_IN, _OUT, _CACHED, _CREATED = TERM_RATES


def total_of(rates: Mapping[str, N], n_in: int, n_out: int, cached: int, created: int, zero: N) -> N:
    """The cost formula (§6.4), per million tokens: each rate times its token count,
    summed; a bucket with no tokens costs nothing (and needs no rate). Over the Decimal
    rates (`PriceTable.cost`) or the same rates as scaled integers (`PriceTable.scaled`)."""
    total = rates[_IN] * n_in + rates[_OUT] * n_out
    if cached:
        total += rates.get(_CACHED, zero) * cached
    if created:
        total += rates.get(_CREATED, zero) * created
    return total


def _priced(ctx: Context, m: MessageView) -> tuple[Prices, dict[str, Any]] | None:
    if ctx.prices is None or m.meta.get("usage") is None:
        return None
    return ctx.prices, m.meta["usage"]


@MESSAGE.register(R.PRICING_VERSION, fast="local")
def pricing_version(ctx: Context, m: MessageView, emit: Emit) -> None:
    hit = _priced(ctx, m)
    if hit is None:
        return
    prices, usage = hit
    version = usage["pricing_version"]
    if version not in prices.versions:
        known = ", ".join(sorted(prices.versions))
        emit(m.rec, "/metadata/usage/pricing_version", R.PRICING_VERSION,
             f"pricing_version {version!r} is not in the price table (known: {known})")  # fmt: skip


@MESSAGE.register(R.PRICING_MODEL, fast="local")
def pricing_model(ctx: Context, m: MessageView, emit: Emit) -> None:
    hit = _priced(ctx, m)
    if hit is None:
        return
    prices, usage = hit
    version, model = usage["pricing_version"], m.meta.get("model")
    if version in prices.versions and model not in prices.versions[version]:
        emit(m.rec, "/metadata/model", R.PRICING_MODEL, f"model {model!r} has no price in pricing_version {version!r}")


@MESSAGE.register(R.PRICING_BUCKET, fast="local")
def pricing_bucket(ctx: Context, m: MessageView, emit: Emit) -> None:
    hit = _priced(ctx, m)
    if hit is None:
        return
    prices, usage = hit
    rates = prices.rates(usage, m.meta.get("model"))
    if rates is None:
        return
    for bucket, rate in USAGE_BUCKETS:
        if usage.get(bucket, 0) and rate not in rates:
            emit(m.rec, f"/metadata/usage/{bucket}", R.PRICING_BUCKET,
                 f"{usage[bucket]} {bucket} but {usage['pricing_version']!r} has no {rate} for {m.meta['model']}")  # fmt: skip
            return


@MESSAGE.register(R.COST_MISMATCH, fast="local")
def cost_mismatch(ctx: Context, m: MessageView, emit: Emit) -> None:
    """§6.4: costs are computed by the core from the price table, so the stored cost is
    the table's exact recomputation, at the table's own precision (the rates' decimal
    places plus six for "per million"): `"0"` for $0.375 is wrong, and so is a cost
    rounded to fewer places than the table gives."""
    hit = _priced(ctx, m)
    if hit is None:
        return
    prices, usage = hit
    model = m.meta.get("model")
    rates = prices.rates(usage, model)
    if rates is None or any(usage.get(b, 0) and r not in rates for b, r in USAGE_BUCKETS):
        return  # TS402/TS403/TS404: nothing to recompute with
    model = str(model)
    stored = exact_cost(m)
    if stored is None:
        return  # not a number at all: the schema said so
    version = usage["pricing_version"]
    exact = prices.cost(version, model, usage)
    with localcontext(_EXACT):
        if stored != exact:
            emit(m.rec, "/metadata/usage/cost_usd", R.COST_MISMATCH,
                 f"cost_usd {_show(usage['cost_usd'], stored)} but the {version} table gives exactly {exact.normalize():f} for {model}")  # fmt: skip


def _show(value: Any, exact: Decimal) -> str:
    return value if isinstance(value, str) else f"{exact:f}"


def exact_cost(m: MessageView) -> Decimal | None:
    """`cost_usd` as an exact Decimal: a string by its text, a JSON number by the text it
    was written with (re-read from the record's JSON with Decimal numbers, never through
    a float); a float made in memory (no text) by its shortest repr."""
    value = m.meta["usage"]["cost_usd"]
    with localcontext(_EXACT):
        if isinstance(value, str):
            try:
                return Decimal(value)
            except InvalidOperation:
                return None
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            return None
        if isinstance(value, float) and m.rec.raw:
            doc = _decimal_document(m.rec.raw)
            for token in (m.rec.pointer + "/metadata/usage/cost_usd").split("/")[1:]:
                key = pointers.unescape(token)
                doc = doc[int(key)] if isinstance(doc, list) else doc[key]
            if isinstance(doc, (Decimal, int)):
                return Decimal(doc)
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


@functools.lru_cache(maxsize=1)
def _decimal_document(raw: bytes) -> Any:
    # one parse per line (or per .json document: its messages share the bytes object)
    return jiter.from_json(raw, float_mode="decimal")


RATE_EXPONENT_RANGE = (-30, 12)
"""A rate in USD per million tokens between 1e-30 and 1e12 (or zero): anything outside is
a typo or an attack (`1e999999999`), and would overflow Decimal arithmetic."""


def _rate(value: Any) -> Decimal | None:
    """A rate as an exact Decimal (from a Decimal, an int, or a decimal string), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (Decimal, int)):
        d = Decimal(value)
    elif isinstance(value, str):
        try:
            d = Decimal(value)
        except InvalidOperation:
            return None
    else:
        return None  # a float never reaches here: both readers give Decimal
    if not d.is_finite() or d < 0:
        return None
    if d and not RATE_EXPONENT_RANGE[0] <= d.adjusted() <= RATE_EXPONENT_RANGE[1]:
        return None
    return d


def load_price_table(path: Path) -> PriceTable:
    """Read and validate a price table file (YAML or JSON); problems -> one-line InputError.

    The file must be a regular file (read bounded, see `files.py`); YAML goes through the
    bounded reader (`conformance/yamlio.py`: no alias bombs, duplicate keys refused, YAML
    1.2 scalars, numbers as Decimal from their text, `.nan`/`.inf` refused); JSON through
    jiter with Decimal numbers, duplicate keys and NaN refused.
    """
    # function-level import: the YAML reader (PyYAML) is loaded only when --pricing is asked
    from ...core import yamlio

    raw = read_regular(path, "--pricing")
    is_yaml = path.suffix in (".yaml", ".yml")
    try:
        if is_yaml:
            doc = yamlio.load(raw.decode("utf-8"), decimal=True)
        else:
            doc = jiter.from_json(raw, float_mode="decimal", catch_duplicate_keys=True, allow_inf_nan=False)
    except yamlio.YamlError as exc:
        raise InputError(f"{path}:{exc.line}: {exc.pointer or '/'}: --pricing file: {exc.reason}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: --pricing file is not valid {'YAML' if is_yaml else 'JSON'}: {exc}") from None
    validator = SchemaValidator(schema_set("canonical", "v1"), "pricing-table.json")
    errors = validator.errors(doc)
    if errors:
        e = errors[0]
        raise InputError(f"{path}: {e.pointer or '/'}: not a price table: {e.message}")
    tables = doc if isinstance(doc, list) else [doc]
    versions: dict[str, dict[str, dict[str, Decimal]]] = {}
    for i, t in enumerate(tables):
        at = f"/{i}" if isinstance(doc, list) else ""
        if t["pricing_version"] in versions:
            raise InputError(f"{path}: {at}/pricing_version: pricing_version {t['pricing_version']!r} appears twice")
        models: dict[str, dict[str, Decimal]] = {}
        for model, rates in t["models"].items():
            models[model] = {}
            for k, v in rates.items():
                d = _rate(v)
                if d is None:
                    ptr = f"{at}/models/{pointers.token(model)}/{k}"
                    raise InputError(
                        f"{path}: {ptr}: rate {str(v)[:40]} is not a finite decimal between 1e-30 and 1e12 (or 0)"
                    )
                models[model][k] = d
        versions[str(t["pricing_version"])] = models
    return PriceTable(versions)
