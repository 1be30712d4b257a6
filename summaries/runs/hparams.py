r"""A run's hyperparameters from every place tools keep them: HParams events, Lightning's ``hparams.yaml``, Hydra's
``.hydra/config.yaml`` (issue 35).

The sources, highest precedence first (a key found in a higher source keeps that source's value; keys the higher
sources lack come from the lower ones, so the result is the union, key by key):

1. **Lightning's** ``hparams.yaml`` in the run directory itself (``TensorBoardLogger.save()`` writes it beside its
   event file, in ``<save_dir>/<name>/version_<n>/``, with ``save_hparams_to_yaml``).
2. **HParams events** in the run's event files (``tensorboard.plugins.hparams``'s ``session_start_info``: TF's
   ``hp.hparams``, tensorboardX's and torch's ``add_hparams``, Lightning's ``log_hyperparams``; the reader's
   ``hparams`` kind, :class:`~tfevents.summaries.reader.types.HParamsRecord.hparams`).
3. **Hydra's** ``.hydra/config.yaml``, the nearest one: in the run directory or in the closest of its ancestors,
   up to and including the logdir (never above it). Hydra keeps ``.hydra/`` in its job's output directory
   (``outputs/<date>/<time>/``, or ``multirun/<date>/<time>/<job>/``) and a Lightning or TensorBoard logger in that
   job writes its runs below it (``.../lightning_logs/version_0``), so the nearest ``.hydra`` above a run is its
   job's; a logdir pointed below the job's output directory does not see it.

Why this order: the run's own sources come before the job's. Hydra's config is the whole job's (several runs may
sit below one ``.hydra``), and a value the program derives from it (a learning rate scaled by the batch size) is
the one it logs for the run. Of the run's own two, the YAML comes first because it keeps the values' types:
Lightning writes ``hparams.yaml`` and its HParams events from the same dict, but an HParams event holds only
numbers, strings and booleans, so a list, a tuple or None reach the events as their text (``"[64, 32]"``,
``"None"``) while the YAML has the list. Where the two disagree otherwise, the file written for that run by the
framework wins over the events (which stay what TensorBoard's HParams dashboard shows).

Keys: nested mappings are flattened, their keys joined with dots (``model: {depth: 4}`` is ``model.depth``); a
list stays one value (a Python list). HParams keys are kept as written, with one exception: Lightning's events join
nested keys with ``/`` (``model/depth``), so an HParams key with slashes whose dotted form is a key of the run's
YAML sources is that key (one column, ``model.depth``, by the precedence above).

Values: YAML is read with PyYAML's safe loader (nothing is constructed but plain data), and two departures:

- PyYAML follows YAML 1.1, where a float needs a dot: a plain (unquoted) ``1e-3`` or ``5E+2`` reads as the
  *string* ``"1e-3"``. YAML 1.2 (and OmegaConf, which Hydra uses, and Lightning when it reads the file back with
  OmegaConf) reads them as floats. Here a plain scalar that is a YAML 1.2 float (``[-+]?(\.\d+|\d+(\.\d*)?)
  ([eE][-+]?\d+)?`` with a dot or an exponent) is a float; a quoted ``'1e-3'`` stays a string.
- Lightning writes with ``yaml.dump`` (not ``safe_dump``) when OmegaConf is absent, so a tuple is
  ``!!python/tuple [1, 2]``: any ``!!python/...`` tag is read as the plain YAML value under it (a list, a mapping
  or a string), never constructed.

A YAML file that is not valid YAML, or whose top level is not a mapping, is a :class:`HParamsFileError` naming the
file (the table reports it by ``on_error``).
"""
from __future__ import annotations

import functools
import re
from typing import Any, Dict, Iterable, Mapping, Optional

__all__ = ["LIGHTNING_FILE", "HYDRA_DIR", "HYDRA_FILE", "HParamsFileError", "parse_hparams_yaml", "flatten",
           "merge_sources", "run_hparams", "hydra_config_folder"]

LIGHTNING_FILE = "hparams.yaml"
HYDRA_DIR = ".hydra"
HYDRA_FILE = "config.yaml"

# YAML 1.2's float (core schema), without .inf/.nan (YAML 1.1 has those): tried after PyYAML's own resolvers, so a
# plain int stays an int and only the floats YAML 1.1 misses (no dot, or an unsigned exponent) are added
_FLOAT_1_2 = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")


class HParamsFileError(ValueError):
    """A hyperparameter file that cannot be read as a YAML mapping; the message names the file."""


@functools.lru_cache(maxsize=1)
def _loader():
    import yaml  # lazy: PyYAML is needed by the run table's YAML sources only

    class Loader(yaml.SafeLoader):
        """The safe loader, with YAML 1.2 floats and ``!!python/`` tags read as plain data (module docstring)."""

    def plain(loader, suffix, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", plain)
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_1_2, list("-+.0123456789"))
    return Loader, yaml.YAMLError


def parse_hparams_yaml(text: str, name: str) -> Dict[str, Any]:
    """The flattened hyperparameters of one YAML file's ``text`` (``name``: the file, for the error message).
    An empty file is ``{}``."""
    loader, yaml_error = _loader()
    import yaml  # lazy: as _loader
    try:
        data = yaml.load(text, Loader=loader)
    except yaml_error as err:
        raise HParamsFileError("%s is not valid YAML: %s" % (name, err)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise HParamsFileError("%s holds %s at its top level, not a mapping of hyperparameters"
                               % (name, type(data).__name__))
    return flatten(data)


def flatten(data: Mapping, prefix: str = "") -> Dict[str, Any]:
    """``data`` with nested mappings flattened, keys joined with dots (``{"a": {"b": 1}}`` -> ``{"a.b": 1}``);
    keys are made strings; an empty nested mapping leaves no key."""
    out: Dict[str, Any] = {}
    for key, value in data.items():
        name = prefix + str(key)
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def merge_sources(*sources: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The union of ``sources``, highest precedence first: each key's value from the first source holding it."""
    out: Dict[str, Any] = {}
    for source in sources:
        for key, value in (source or {}).items():
            out.setdefault(key, value)
    return out


def run_hparams(events: Optional[Mapping[str, Any]], lightning: Optional[Mapping[str, Any]] = None,
                hydra: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """One run's hyperparameters from its flattened sources (module docstring: the precedence, and HParams keys
    with slashes that name a YAML source's dotted key)."""
    if not lightning and not hydra:
        return dict(events or {})
    dotted = set(lightning or ()) | set(hydra or ())
    events = {(key.replace("/", ".") if "/" in key and key.replace("/", ".") in dotted else key): value
              for key, value in (events or {}).items()}
    return merge_sources(lightning, events, hydra)


def hydra_config_folder(run: str, listing: Mapping[str, Iterable[str]]) -> Optional[str]:
    """The folder (relative to the logdir, ``/``-separated, ``.`` the logdir) whose ``.hydra/config.yaml`` is the
    run's: the run's own folder or its nearest ancestor up to the logdir holding one, by ``listing`` (folder ->
    its file names, as the reader's walk lists them); None when there is none."""
    folder = run
    while True:
        hydra = HYDRA_DIR if folder == "." else folder + "/" + HYDRA_DIR
        if HYDRA_FILE in listing.get(hydra, ()):
            return folder
        if folder == ".":
            return None
        folder = folder.rpartition("/")[0] or "."

