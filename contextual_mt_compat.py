"""Compatibility layer: fairseq 0.12.2 on Python 3.11, PyTorch >= 2.6 and numpy >= 1.24.

fairseq 0.12.2 is the last release and is unmaintained. Each fix below is small,
targeted at fairseq's own modules, and never edits fairseq's installed files:

1. ``dataclass_defaults``: Python 3.11 rejects a dataclass instance as a field default
   (``ValueError: mutable default ... CommonConfig``). fairseq's ``hydra_init`` reads
   ``Field.default``, so converting to ``default_factory`` would break it. Instead, while a
   fairseq dataclass is processed, its dataclass-instance defaults get identity hashing.
2. ``checkpoint_loading``: PyTorch >= 2.6 loads with ``weights_only=True``, which refuses
   fairseq checkpoints (they hold an ``argparse.Namespace``). ``torch.load`` called from
   fairseq or contextual_mt without an explicit ``weights_only`` gets ``weights_only=False``,
   the behaviour these checkpoints were written for (only load checkpoints you trust).
3. ``encoder_fastpath``: the BetterTransformer inference fast path of fairseq's encoder layer
   fails on recent PyTorch (``Mask Type should be defined``, then a padding-mask shape
   assertion). It is switched off on every encoder layer.
4. ``numpy_aliases``: numpy >= 1.24 removed ``np.float`` and ``np.int``, still used in
   fairseq code paths; the builtin aliases are restored.
5. ``quiet_import``: fairseq's speech tasks log "Please install tensorboardX" (INFO) on every
   import, for a package only their training uses; that one message is dropped.

``register_plugins`` imports a package's fairseq registrations (task, models) once fairseq has
been imported, so that the package itself (and its commands) can start without torch and fairseq.

The stock console scripts (``fairseq-train`` ...) import fairseq before any ``--user-dir``,
so ``activate()`` must run at interpreter start-up: ``make install`` writes a
``contextual_mt_compat.pth`` into the environment's site-packages (see ``install_pth``).
Fix 1 is installed at once; fixes 2-4 are applied right after ``fairseq`` finishes importing.
This module must stay cheap to import: it runs in every Python process of the environment.
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.util
import inspect
import sys
from typing import TypedDict

_FAIRSEQ_PREFIXES = ("fairseq", "fairseq_cli")
_TRUSTED_CALLERS = ("fairseq", "fairseq_cli", "contextual_mt")


class _State(TypedDict):
    dataclasses: bool  # fix 1 installed
    post_import: bool  # fixes 2-4 applied (fairseq imported)
    hook: _FairseqImportHook | None  # waiting for fairseq's import
    plugins: list[_Plugins]  # registrations waiting for fairseq


_state: _State = {"dataclasses": False, "post_import": False, "hook": None, "plugins": []}


def _from_module(name: str | None, prefixes: tuple[str, ...]) -> bool:
    return bool(name) and name is not None and (name in prefixes or name.split(".")[0] in prefixes)


# 1. dataclass defaults -------------------------------------------------------------------
def patch_dataclass_defaults() -> None:
    if _state["dataclasses"]:
        return
    original = dataclasses._process_class  # type: ignore[attr-defined]  # private: every dataclass goes through it

    def _process_class(cls, *args, **kwargs):
        if _from_module(getattr(cls, "__module__", None), _FAIRSEQ_PREFIXES):
            for name in inspect.get_annotations(cls):
                default = cls.__dict__.get(name)
                if isinstance(default, dataclasses.Field):
                    default = default.default
                if (
                    dataclasses.is_dataclass(default)
                    and not isinstance(default, type)
                    and type(default).__hash__ is None
                ):
                    type(default).__hash__ = object.__hash__  # type: ignore[method-assign]  # made hashable
        return original(cls, *args, **kwargs)

    _process_class.__wrapped__ = original  # type: ignore[attr-defined]  # an attribute set on a function
    dataclasses._process_class = _process_class  # type: ignore[attr-defined]  # (see above)
    _state["dataclasses"] = True


# 2. checkpoint loading -------------------------------------------------------------------
def patch_checkpoint_loading() -> None:
    import torch

    if getattr(torch.load, "_contextual_mt_compat", False):
        return
    original = torch.load

    def load(*args, **kwargs):
        if "weights_only" not in kwargs:
            caller = sys._getframe(1).f_globals.get("__name__")
            if _from_module(caller, _TRUSTED_CALLERS):
                kwargs["weights_only"] = False
        return original(*args, **kwargs)

    load._contextual_mt_compat = True  # type: ignore[attr-defined]  # marks the patched function
    load.__wrapped__ = original  # type: ignore[attr-defined]  # an attribute set on a function
    load.__doc__ = original.__doc__
    torch.load = load


# 3. encoder fast path --------------------------------------------------------------------
def patch_encoder_fastpath() -> None:
    from fairseq.modules import transformer_layer

    layer_cls = transformer_layer.TransformerEncoderLayerBase
    if getattr(layer_cls.__init__, "_contextual_mt_compat", False):
        return
    original = layer_cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.can_use_fastpath = False

    __init__._contextual_mt_compat = True  # type: ignore[attr-defined]  # marks the patched function
    layer_cls.__init__ = __init__


# 4. numpy aliases ------------------------------------------------------------------------
_NUMPY_ALIASES = {"float": float, "int": int, "bool": bool, "object": object}


def patch_numpy_aliases() -> None:
    import warnings

    import numpy

    for name, value in _NUMPY_ALIASES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            missing = not hasattr(numpy, name)
        if missing:
            setattr(numpy, name, value)


# 5. import-time noise ---------------------------------------------------------------------
_NOISE = ("fairseq.tasks.text_to_speech", "Please install tensorboardX")


def _not_noise(record) -> bool:
    return not str(record.msg).startswith(_NOISE[1])


def quiet_import() -> None:
    import logging

    logger = logging.getLogger(_NOISE[0])
    if _not_noise not in logger.filters:
        logger.addFilter(_not_noise)


def _post_import() -> None:
    if _state["post_import"]:
        return
    _state["post_import"] = True
    patch_numpy_aliases()
    patch_checkpoint_loading()
    patch_encoder_fastpath()
    for plugins in list(_state["plugins"]):
        plugins.register()


class _FairseqImportHook(importlib.abc.MetaPathFinder):
    """Runs the post-import fixes as soon as the ``fairseq`` package has executed."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "fairseq":
            return None
        sys.meta_path.remove(self)
        _state["hook"] = None
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            quiet_import()
            exec_module(module)
            _post_import()

        spec.loader.exec_module = exec_and_patch  # type: ignore[method-assign]  # fairseq's loader, patched
        return spec


def activate() -> None:
    """Install every fix. Idempotent; cheap until fairseq is imported."""
    patch_dataclass_defaults()
    if "fairseq" in sys.modules:
        _post_import()
    elif _state["hook"] is None:
        hook = _state["hook"] = _FairseqImportHook()
        sys.meta_path.insert(0, hook)


def _next_spec(finder, fullname, path, target):
    """The spec the finders after ``finder`` on sys.meta_path give for ``fullname``."""
    after = sys.meta_path[sys.meta_path.index(finder) + 1 :] if finder in sys.meta_path else sys.meta_path
    for other in after:
        find_spec = getattr(other, "find_spec", None)
        spec = find_spec(fullname, path, target) if find_spec else None
        if spec is not None:
            return spec
    return None


class _Plugins(importlib.abc.MetaPathFinder):
    """Imports a package's registration modules once fairseq has been imported and no module of
    the package is being imported: the module that imported fairseq may be one the registration
    modules import from, and is complete only when its import ends."""

    def __init__(self, package: str, modules: tuple[str, ...]):
        self.package, self.modules, self.importing, self.done = package, modules, 0, False

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith(self.package + "."):
            return None
        spec = _next_spec(self, fullname, path, target)
        exec_module = getattr(spec and spec.loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_register(module):
            self.importing += 1
            try:
                exec_module(module)
            finally:
                self.importing -= 1
            self.register()

        spec.loader.exec_module = exec_then_register
        return spec

    def register(self) -> None:
        if self.done or self.importing or not _state["post_import"]:
            return
        self.done = True
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        _state["plugins"].remove(self)
        for name in self.modules:
            importlib.import_module(name)


def register_plugins(package: str, modules: tuple[str, ...]) -> None:
    """Import ``modules`` (``package``'s fairseq registrations) now if fairseq is imported (as
    under ``--user-dir``), else right after fairseq is."""
    activate()
    plugins = _Plugins(package, modules)
    _state["plugins"].append(plugins)
    if _state["post_import"]:
        plugins.register()
    else:
        sys.meta_path.insert(0, plugins)


PTH_NAME = "contextual_mt_compat.pth"
PTH_LINE = "import contextual_mt_compat; contextual_mt_compat.activate()\n"


def install_pth(site_dir: str | None = None) -> str:
    """Write the start-up hook into ``site_dir`` (default: this environment's purelib)."""
    import os
    import sysconfig

    site_dir = site_dir or sysconfig.get_paths()["purelib"]
    path = os.path.join(site_dir, PTH_NAME)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(PTH_LINE)
    os.replace(tmp, path)
    return path


if __name__ == "__main__":
    print(install_pth(sys.argv[1] if len(sys.argv) > 1 else None))
