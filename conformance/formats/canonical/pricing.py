"""Costs recomputed from the local price table (spec §6.4, adapter contract §7.1).

All arithmetic is `Decimal`: YAML and JSON numbers are read through their decimal text,
never through a float, so 0.30 stays 0.30.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jiter
import yaml

from ...errors import InputError
from ...findings import Finding
from ...jsonio import Record
from ...schema_validation import SchemaValidator
from ...schemas import schema_set
from . import rules as R

if TYPE_CHECKING:
    from .checker import CanonicalRun

MTOK = Decimal(1_000_000)
_ZERO = Decimal(0)
_HALF_UNIT: dict[int, Decimal] = {}  # decimal places -> half a unit in the last place


class _DecimalLoader(yaml.SafeLoader):
    """SafeLoader that reads floats as Decimal (PyYAML would make them binary floats)."""


def _decimal(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Decimal:
    return Decimal(str(loader.construct_scalar(node)).replace("_", ""))


_DecimalLoader.add_constructor("tag:yaml.org,2002:float", _decimal)


@dataclass(frozen=True)
class PriceTable:
    """pricing_version -> model id -> rate name -> USD per million tokens."""

    versions: dict[str, dict[str, dict[str, Decimal]]]

    def cost(self, version: str, model: str, usage: dict[str, Any]) -> Decimal:
        """The exact cost of `usage` (Decimal times int is exact; `scaleb` divides by 10^6 exactly)."""
        rates = self.versions[version][model]
        n_in: int = usage["input_tokens"]
        n_out: int = usage["output_tokens"]
        total = rates["input_per_mtok_usd"] * n_in + rates["output_per_mtok_usd"] * n_out
        cached: int = usage.get("cached_input_tokens", 0)
        if cached:
            total += rates.get("cached_read_per_mtok_usd", _ZERO) * cached
        created: int = usage.get("cache_creation_input_tokens", 0)
        if created:
            total += rates.get("cache_write_per_mtok_usd", _ZERO) * created
        return total.scaleb(-6)

    def check(self, run: CanonicalRun, rec: Record, meta: dict[str, Any]) -> Iterator[Finding]:
        usage = meta["usage"]
        version = usage["pricing_version"]
        model = meta.get("model")
        table = self.versions.get(version)
        if table is None:
            if run.on["TS402"]:
                known = ", ".join(sorted(self.versions))
                yield run._f(
                    rec,
                    "/metadata/usage/pricing_version",
                    R.PRICING_VERSION,
                    f"pricing_version {version!r} is not in the price table (known: {known})",
                )
            return
        if model is None or model not in table:
            if run.on["TS403"]:
                yield run._f(
                    rec,
                    "/metadata/model",
                    R.PRICING_MODEL,
                    f"model {model!r} has no price in pricing_version {version!r}",
                )
            return
        rates = table[model]
        for bucket, rate in (
            ("cached_input_tokens", "cached_read_per_mtok_usd"),
            ("cache_creation_input_tokens", "cache_write_per_mtok_usd"),
        ):
            if usage.get(bucket, 0) and rate not in rates:
                if run.on["TS404"]:
                    yield run._f(
                        rec,
                        f"/metadata/usage/{bucket}",
                        R.PRICING_BUCKET,
                        f"{usage[bucket]} {bucket} but {version!r} has no {rate} for {model}",
                    )
                return
        if not run.on["TS401"]:
            return
        text: str = usage["cost_usd"]
        stored = Decimal(text)
        exact = self.cost(version, model, usage)
        dot = text.find(".")
        places = len(text) - dot - 1 if dot >= 0 else 0
        tolerance = _HALF_UNIT.get(places)
        if tolerance is None:
            tolerance = _HALF_UNIT[places] = Decimal(5).scaleb(-places - 1)
        if abs(stored - exact) > tolerance:
            yield run._f(rec, "/metadata/usage/cost_usd", R.COST_MISMATCH,
                         f"cost_usd {usage['cost_usd']} but the {version} table gives {exact.normalize():f} for {model}")  # fmt: skip


def load_price_table(path: Path) -> PriceTable:
    """Read and validate a price table file (YAML or JSON); problems -> InputError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read --pricing file: {exc.strerror}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            doc = yaml.load(raw.decode("utf-8"), Loader=_DecimalLoader)
        else:
            doc = jiter.from_json(raw, float_mode="decimal", catch_duplicate_keys=True, allow_inf_nan=False)
    except (ValueError, yaml.YAMLError) as exc:
        raise InputError(
            f"{path}: --pricing file is not valid {'YAML' if path.suffix in ('.yaml', '.yml') else 'JSON'}: {exc}"
        ) from None
    validator = SchemaValidator(schema_set("canonical", "v1"), "pricing-table.json")
    errors = validator.errors(doc)
    if errors:
        e = errors[0]
        raise InputError(f"{path}: {e.pointer or '/'}: not a price table: {e.message}")
    tables = doc if isinstance(doc, list) else [doc]
    versions: dict[str, dict[str, dict[str, Decimal]]] = {}
    for t in tables:
        if t["pricing_version"] in versions:
            raise InputError(f"{path}: pricing_version {t['pricing_version']!r} appears twice")
        try:
            versions[str(t["pricing_version"])] = {
                model: {k: Decimal(str(v)) for k, v in rates.items()} for model, rates in t["models"].items()
            }
        except InvalidOperation:
            raise InputError(f"{path}: a rate is not a decimal number") from None
    return PriceTable(versions)
