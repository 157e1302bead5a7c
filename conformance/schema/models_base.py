"""The template of `generated/turnspec_models/_base.py` (`codegen` copies it there under
its "generated, do not edit" header): a real module, so ruff and mypy check it. Nothing
in this package imports it."""

from __future__ import annotations

import functools
import typing
from typing import Any

from pydantic import BaseModel, ValidationError, ValidatorFunctionWrapHandler, model_validator


@functools.cache
def _tags(cls: type[BaseModel]) -> tuple[tuple[str, str, Any], ...]:
    """(name, key in the data, value) of each field typed by one literal that defaults to it."""
    out: list[tuple[str, str, Any]] = []
    for name, field in cls.model_fields.items():
        args = typing.get_args(field.annotation)
        if typing.get_origin(field.annotation) is typing.Literal and len(args) == 1 and field.default == args[0]:
            out.append((name, field.alias or name, args[0]))
    return tuple(out)


class TurnspecModel(BaseModel):
    """A model whose one-literal fields (tags) default to their literal when it is built
    in code, and are required in the data `model_validate` reads."""

    def __init__(self, /, **data: Any) -> None:
        for name, key, value in _tags(type(self)):
            if name not in data and key not in data:
                data[key] = value
        super().__init__(**data)

    # as pydantic's RootModel does: validation (`model_validate`) does not call this
    # `__init__`, which only fills in the keyword arguments of a model built in code
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @model_validator(mode="wrap")
    @classmethod
    def _tags_given(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # a tag missing from the data is pydantic's own `missing` error at the tag's place
        # (`content.0.type`), as for any required field, not an error of the whole model
        if isinstance(data, dict):
            missing = [key for name, key, _ in _tags(cls) if name not in data and key not in data]
            if missing:
                raise ValidationError.from_exception_data(
                    cls.__name__, [{"type": "missing", "loc": (key,), "input": data} for key in missing]
                )
        return handler(data)
