"""What model calls cost: price tables, the maintained one, and :class:`Cost`, a sum of costs.

Below tracing and the sub-agents: cost limits, ``Trace.token_usage(cost=True)`` and the views
price with :func:`default_prices`. Every source answers one question, :meth:`PriceSource.price_of`:
a :class:`PriceTable` (user tables, the dated :data:`BUILTIN_PRICES`) or :class:`GenaiPrices`.

genai-prices (the ``cost`` extra) ships a dated snapshot of providers' public prices inside the
package and only goes to the network when asked to (``genai_prices.UpdatePrices``), which
nbagents never does: a cost is what the installed snapshot says, so the same trace costs the
same on every machine with the same package version.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import metadata
from typing import Protocol, runtime_checkable

from nbagents._tokens import TokenUsage

__all__ = [
    "BUILTIN_PRICES",
    "BUILTIN_PRICES_DATE",
    "Cost",
    "GenaiPrices",
    "ModelPrice",
    "PriceSource",
    "PriceTable",
    "Prices",
    "as_price_source",
    "default_prices",
]


@runtime_checkable
class PriceSource(Protocol):
    """Anything that prices one model call: a :class:`PriceTable`, or the maintained table."""

    def price_of(self, model: str | None, usage: TokenUsage) -> Decimal | None:
        """What a call of ``model`` using ``usage`` cost, or ``None`` if the price is unknown."""
        ...


_MILLION = Decimal(1_000_000)
_SNAPSHOT = re.compile(r"\d{4}-\d{2}-\d{2}|\d{8}|latest")


@dataclass(frozen=True)
class ModelPrice:
    """What one model charges, in a currency per million tokens (USD in the built-in table).

    ``cache_read`` prices input tokens served from the provider's prompt cache and
    ``cache_write`` those written to it; ``None`` bills them as ordinary input.
    ``cache_write_1h`` prices writes to a one-hour cache (Anthropic's); ``None`` bills them as
    other writes. Reasoning tokens are output and billed as output. Prices are read through
    ``Decimal(str(price))`` so that a sum of costs is exact to the digits written here.
    """

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    cache_write_1h: float | None = None

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        cache_write_1h_tokens: int = 0,
    ) -> Decimal:
        """The cost of one call. ``input_tokens`` includes the cache reads and writes, as
        LangChain counts them, and ``cache_write_tokens`` the one-hour writes."""
        read, written, hour = _cache_parts(
            input_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens
        )
        read_price = self.input if self.cache_read is None else self.cache_read
        write_price = self.input if self.cache_write is None else self.cache_write
        hour_price = write_price if self.cache_write_1h is None else self.cache_write_1h
        total = (
            _dec(self.input) * (input_tokens - read - written)
            + _dec(read_price) * read
            + _dec(write_price) * (written - hour)
            + _dec(hour_price) * hour
            + _dec(self.output) * output_tokens
        )
        return total / _MILLION


def _cache_parts(inp: int, read: int, written: int, hour: int) -> tuple[int, int, int]:
    """Cache reads, writes and one-hour writes, each cut to fit in what contains it (the
    input, what the reads leave of it, the writes): a loaded trace may hold any numbers."""
    read = min(max(read, 0), max(inp, 0))
    written = min(max(written, 0), max(inp, 0) - read)
    return read, written, min(max(hour, 0), written)


def _dec(value: float) -> Decimal:
    return Decimal(str(value))


BUILTIN_PRICES_DATE = "2025-08"
"""When the built-in prices were copied from the providers' public price pages. Prices change:
pass your own table (``PriceTable({...})`` or ``BUILTIN_PRICES.with_prices({...})``) for money
that matters."""

_BUILTIN: dict[str, ModelPrice] = {
    # OpenAI, standard tier, USD per 1M tokens
    "gpt-4o": ModelPrice(2.50, 10.00, 1.25),
    "gpt-4o-mini": ModelPrice(0.15, 0.60, 0.075),
    "gpt-4.1": ModelPrice(2.00, 8.00, 0.50),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60, 0.10),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40, 0.025),
    "o3": ModelPrice(2.00, 8.00, 0.50),
    "o4-mini": ModelPrice(1.10, 4.40, 0.275),
    # Anthropic, USD per 1M tokens: input, output, a cache hit, a five-minute cache write, a
    # one-hour cache write
    "claude-opus-4": ModelPrice(15.00, 75.00, 1.50, 18.75, 30.00),
    "claude-opus-4-1": ModelPrice(15.00, 75.00, 1.50, 18.75, 30.00),
    "claude-sonnet-4": ModelPrice(3.00, 15.00, 0.30, 3.75, 6.00),
    "claude-3-7-sonnet": ModelPrice(3.00, 15.00, 0.30, 3.75, 6.00),
    "claude-3-5-haiku": ModelPrice(0.80, 4.00, 0.08, 1.00, 1.60),
}


class PriceTable(Mapping[str, ModelPrice]):
    """Model name → :class:`ModelPrice`.

    A model name matches a key exactly, or as a dated snapshot of it: ``gpt-4o-2024-08-06``
    and ``gpt-4o-latest`` are priced as ``gpt-4o``, ``claude-sonnet-4-20250514`` as
    ``claude-sonnet-4``. Any other suffix names another model (``o3-mini`` is not ``o3``), which
    stays unknown until the table has it. A provider prefix (``openai:gpt-4o``,
    ``anthropic/claude-sonnet-4``) is ignored when the full name is not in the table.

    A table is complete by itself: a model it does not name is unknown, unless ``fallback``
    (another :class:`PriceSource`, such as the maintained table) prices it.
    """

    def __init__(
        self,
        prices: Mapping[str, ModelPrice | tuple[float, ...]] | None = None,
        *,
        fallback: PriceSource | None = None,
    ) -> None:
        self._prices: dict[str, ModelPrice] = {
            name: _as_price(name, price) for name, price in (prices or {}).items()
        }
        self.fallback = fallback

    def with_prices(self, prices: Mapping[str, ModelPrice | tuple[float, ...]]) -> PriceTable:
        """A new table: this one with ``prices`` added or overriding entries of the same name."""
        merged: dict[str, ModelPrice | tuple[float, ...]] = dict(self._prices)
        merged.update(prices)
        return PriceTable(merged, fallback=self.fallback)

    def price_of(self, model: str | None, usage: TokenUsage) -> Decimal | None:
        price = self.lookup(model)
        if price is not None:
            return price.cost(
                usage.input, usage.output, usage.cache_read, usage.cache_write, usage.cache_write_1h
            )
        return None if self.fallback is None else self.fallback.price_of(model, usage)

    def lookup(self, model: str | None) -> ModelPrice | None:
        """The price of ``model``, or ``None`` when the table does not know it."""
        if not model:
            return None
        # The name as given, then without a provider prefix (``openai:``, ``anthropic/``).
        bare = (model.rsplit(separator, 1)[1] for separator in ":/" if separator in model)
        found = (self._match(name) for name in [model, *bare])
        return next((price for price in found if price is not None), None)

    def _match(self, name: str) -> ModelPrice | None:
        if name in self._prices:
            return self._prices[name]
        # Only a date or "latest" may follow a key: "o3-mini" or "claude-opus-4-5" are other
        # models at other prices, and an unknown price is better than a wrong one.
        key, _, suffix = name.rpartition("-")
        while key:
            if _SNAPSHOT.fullmatch(suffix) and key in self._prices:
                return self._prices[key]
            key, _, more = key.rpartition("-")
            suffix = f"{more}-{suffix}"
        return None

    def __getitem__(self, key: str) -> ModelPrice:
        return self._prices[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._prices)

    def __len__(self) -> int:
        return len(self._prices)

    def __repr__(self) -> str:
        then = "" if self.fallback is None else f", then {self.fallback!r}"
        return f"PriceTable({len(self)} models: {', '.join(sorted(self))}{then})"


def _as_price(name: str, price: ModelPrice | tuple[float, ...]) -> ModelPrice:
    if isinstance(price, ModelPrice):
        return price
    if isinstance(price, tuple) and len(price) in (2, 3, 4, 5):
        return ModelPrice(*price)
    raise TypeError(
        f"The price of {name!r} must be a ModelPrice or a tuple "
        f"(input, output[, cache_read[, cache_write[, cache_write_1h]]]) per million tokens, "
        f"not {price!r}."
    )


BUILTIN_PRICES = PriceTable(_BUILTIN)
"""A few well-known models, as of :data:`BUILTIN_PRICES_DATE`, USD per million tokens."""


class GenaiPrices:
    """Prices from the installed genai-prices snapshot (``pip install "jupyter-nbagents[cost]"``).

    A model name may carry its provider (``openai:gpt-4o``, ``anthropic/claude-sonnet-4``);
    otherwise genai-prices finds the provider from the name. Dated snapshots
    (``claude-sonnet-4-5-20250929``) are priced as their model. Cache reads, writes and one-hour
    writes are billed at the model's cache prices, and reasoning tokens as genai-prices bills
    them (as output, unless a model has a price of its own for them).
    """

    def __init__(self) -> None:
        try:
            import genai_prices  # noqa: F401  (fail here, with the install hint, not at first use)
        except ImportError as error:
            raise ImportError("GenaiPrices needs: pip install 'jupyter-nbagents[cost]'") from error

        self.version = metadata.version("genai-prices")

    def price_of(self, model: str | None, usage: TokenUsage) -> Decimal | None:
        if not model:
            return None
        read, written, hour = _cache_parts(
            usage.input, usage.cache_read, usage.cache_write, usage.cache_write_1h
        )
        out = max(usage.output, 0)
        reasoning = min(max(usage.reasoning, 0), out)
        return _price(model, max(usage.input, 0), out, read, written, hour, reasoning)

    def __repr__(self) -> str:
        return f"GenaiPrices(genai-prices {self.version})"


@functools.lru_cache(maxsize=4096)
def _price(
    model: str, inp: int, out: int, read: int, write: int, write_1h: int, reasoning: int
) -> Decimal | None:
    # Cached: a view or a cost table prices the same calls again.
    from genai_prices import Usage, calc_price

    if model in _UNKNOWN:
        return None
    usage = Usage(
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=write_1h,
        output_reasoning_tokens=reasoning,
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
not seen (its tokens differ) would otherwise search the table again."""


def _provider_and_name(model: str) -> list[tuple[str | None, str]]:
    split = [model.partition(separator)[::2] for separator in ":/"]
    return [*((provider, name) for provider, name in split if provider and name), (None, model)]


Prices = PriceSource | Mapping[str, ModelPrice | tuple[float, ...]]
"""What a function that prices takes: a price source, or a mapping of model name to price."""


@dataclass(frozen=True)
class Cost:
    """A sum of model-call costs. ``unknown`` names the models the price table lacks: while it
    is not empty, ``amount`` covers only the priced calls and is not the cost."""

    amount: Decimal = Decimal(0)
    unknown: frozenset[str] = field(default_factory=frozenset)

    @property
    def known(self) -> bool:
        return not self.unknown

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.amount + other.amount, self.unknown | other.unknown)

    def value(self) -> float | None:
        """The cost as a float, or ``None`` when some model's price is unknown."""
        return float(self.amount) if self.known else None


@functools.cache
def default_prices() -> PriceSource:
    """The prices used when none are given: genai-prices' maintained table when the ``cost``
    extra is installed (``pip install "jupyter-nbagents[cost]"``), else :data:`BUILTIN_PRICES`."""
    try:
        return GenaiPrices()
    except ImportError:
        return BUILTIN_PRICES


def as_price_source(prices: Prices | None) -> PriceSource:
    if prices is None:
        return default_prices()
    if isinstance(prices, PriceSource):
        return prices
    if isinstance(prices, Mapping):
        return PriceTable(prices)
    raise TypeError(
        f"prices must be a PriceTable, another PriceSource or a mapping of model name to "
        f"price, not {type(prices).__name__}."
    )
