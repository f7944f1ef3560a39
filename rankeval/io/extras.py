"""The inputs beyond predictions and truth (``--train``, ``--catalog``, ``--item-features``,
``--item-groups``, ``--propensity``): which option provides what a metric needs, and their
loading, on the driver or here. What the build makes of them: ``build/items.py`` (item
statistics) and ``build/seen.py`` (seen-item exclusion).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rankeval.errors import OptionError
from rankeval.io.columns import EXTRA
from rankeval.io.features import ItemFeatures, load_item_features
from rankeval.io.groups import ItemGroups, load_item_groups
from rankeval.io.load import Catalog, Train, load_catalog, load_train, open_input
from rankeval.io.propensities import Propensities, load_propensities
from rankeval.params import FROM_FILE, exponent, kernel_params
from rankeval.registry import REGISTRY
from rankeval.settings import Settings

# Options that provide each input a metric may need (registry ``needs``).
PROVIDERS = {"interactions": ("train",), "propensity": ("train", "propensity"),
             "catalog": ("catalog", "train"),
             "item_features": ("item_features",), "item_groups": ("item_groups",)}


@dataclass(frozen=True)
class Extras:
    """The optional inputs of an evaluation."""

    train: Train | None = None
    catalog: Catalog | None = None
    item_features: ItemFeatures | None = None
    item_groups: ItemGroups | None = None
    propensity: Propensities | None = None
    exclude: Train | None = None  # pairs to mask from the lists (--exclude), apart from train

    def given(self) -> set[str]:
        return {name for name in EXTRA if getattr(self, name) is not None}


def load_extras(given: Mapping[str, Any], columns: Mapping[str, str | None] | None = None,
                reading: Mapping[str, Any] | None = None) -> Extras:
    """Open and load the optional inputs in ``given`` (``EXTRA``: ``train``, ``catalog``,
    ``item_features``, ``item_groups``, ``propensity``; paths or in-memory tables, each
    with its ``NAME_format``), with the same column options as the main inputs."""
    cols, separator = columns or {}, (reading or {}).get("tag_separator")
    loaders: dict[str, Callable[[Any], Any]] = {
        "train": lambda t: load_train(t, cols),
        "catalog": lambda t: load_catalog(t, cols.get("item_col")),
        "item_features": lambda t: load_item_features(t, cols.get("item_col"), separator),
        "item_groups": lambda t: load_item_groups(t, cols.get("item_col")),
        "propensity": lambda t: load_propensities(t, cols.get("user_col"), cols.get("item_col"),
                                                  cols.get("propensity_col")),
        "exclude": lambda t: load_train(t, cols, role="exclude"),
    }
    loaded = {name: loaders[name](open_input(given[name], name, given.get(f"{name}_format"),
                                             reading))
              for name in EXTRA if given.get(name) is not None}
    return Extras(**loaded)


# The optional inputs a cluster engine reads on its driver and sends to every task with the
# item statistics (the others, --train and --catalog, its workers read)
ON_DRIVER = ("item_features", "item_groups", "propensity")


def load_on_driver(given: Mapping[str, Any], columns: Mapping[str, str | None] | None,
                   reading: Mapping[str, Any] | None) -> dict[str, Any]:
    """``given``'s ``ON_DRIVER`` inputs loaded here, by name (each with its format)."""
    here = {n: given[n] for n in ON_DRIVER if given.get(n) is not None}
    if not here:
        return {}
    loaded = load_extras({**here, **{f"{n}_format": given.get(f"{n}_format") for n in here}},
                         columns, reading)
    return {n: getattr(loaded, n) for n in here}


def check_needs(settings: Settings, given: set[str]) -> None:
    """A metric or option without the input it needs: an error naming the option, raised
    before any data is read."""
    for spec in settings.specs:
        for need in sorted(REGISTRY[spec.name].needs - {"subtopics"}):  # the truth's
            providers = PROVIDERS[need]
            if need == "propensity":  # where the weights come from: its parameters say
                key = exponent(spec.name, kernel_params(spec.params, spec.name))
                providers = ("propensity",) if key == FROM_FILE else ("train",)
                if key == FROM_FILE and "propensity" not in given:
                    raise OptionError(
                        f"{spec} needs {{opt:propensity}} FILE (each item's probability of "
                        f"being observed), or gamma= and {{opt:train}} for the popularity "
                        f"model: {spec.name}(gamma=2)@10 (SPEC section 7)")
            if not given & set(providers):
                options = " or ".join(f"{{opt:{o}}}" for o in providers)
                raise OptionError(f"{spec.name} needs {options} (SPEC section 7)")
    if settings.exclude_seen and "train" not in given:
        raise OptionError("{opt:exclude_seen} needs {opt:train}: the training interactions "
                          "say which items each user has seen (or mask a file's pairs with "
                          "{opt:exclude} FILE)")
    if settings.exclude_seen_truth and not given & {"train", "exclude"}:
        raise OptionError("{opt:exclude_seen_truth} needs {opt:train} or {opt:exclude}: the "
                          "pairs they hold are dropped from the truth")
