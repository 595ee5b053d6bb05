"""The maintained price table: genai-prices (the ``cost`` extra), read offline.

genai-prices ships a dated snapshot of providers' public prices inside the package and only
goes to the network when asked to (``genai_prices.UpdatePrices``), which nbagents never does:
a cost is what the installed snapshot says, so the same trace costs the same on every machine
with the same package version.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from importlib import metadata

from nbagents._tokens import TokenUsage

__all__ = ["GenaiPrices"]


class GenaiPrices:
    """Prices from the installed genai-prices snapshot (``pip install "jupyter-nbagents[cost]"``).

    A model name may carry its provider (``openai:gpt-4o``, ``anthropic/claude-sonnet-4``);
    otherwise genai-prices finds the provider from the name. Dated snapshots
    (``claude-sonnet-4-5-20250929``) are priced as their model. Cache reads and writes are billed
    at the model's cache prices.
    """

    def __init__(self) -> None:
        try:
            import genai_prices  # noqa: F401  (fail here, with the install hint, not at first use)
        except ImportError as error:
            raise ImportError(
                f"GenaiPrices needs genai-prices: pip install 'jupyter-nbagents[cost]' ({error})."
            ) from error

        self.version = metadata.version("genai-prices")

    def price_of(self, model: str | None, usage: TokenUsage) -> Decimal | None:
        if not model:
            return None
        return _price(model, usage.input, usage.output, usage.cache_read, usage.cache_write)

    def __repr__(self) -> str:
        return f"GenaiPrices(genai-prices {self.version})"


@functools.lru_cache(maxsize=4096)
def _price(model: str, inp: int, out: int, read: int, write: int) -> Decimal | None:
    # Cached: a view or a cost table prices the same calls again, and one lookup costs ~80 µs.
    from genai_prices import Usage, calc_price

    if model in _UNKNOWN:
        return None
    usage = Usage(
        input_tokens=inp, output_tokens=out, cache_read_tokens=read, cache_write_tokens=write
    )
    for provider, name in _provider_and_name(model):
        try:
            return calc_price(usage, model_ref=name, provider_id=provider).total_price
        except LookupError:
            continue
    _UNKNOWN.add(model)
    return None


_UNKNOWN: set[str] = set()
"""Models the snapshot has no price for under any reading of the name. Only finding a model
raises ``LookupError``, so this holds whatever the tokens; each call of a model the cache has
not seen (its tokens differ) would otherwise search the table again (~40 µs), and a 500-way run
on a local or scripted model makes a thousand such calls."""


def _provider_and_name(model: str) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for separator in (":", "/"):
        provider, found, name = model.partition(separator)
        if found and provider and name:
            out.append((provider, name))
    out.append((None, model))
    return out
