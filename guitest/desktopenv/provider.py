"""Desktop machines reverted to a snapshot before each episode through desktop-env's own provider layer.

OSWorld's harness keeps its VMs in a known state by reverting them before every task
(``desktop_env/desktop_env.py``, ``DesktopEnv.reset``): through a provider of ``desktop_env/providers``
(VMware, VirtualBox, Docker, AWS, Azure, ...) made by ``create_vm_manager_and_provider(name, region)``,
it calls ``revert_to_snapshot(path_to_vm, snapshot_name)`` (which may return a new ``path_to_vm``: AWS
launches a new instance), then ``start_emulator(path_to_vm, headless, os_type)`` and
``get_ip_address(path_to_vm)`` (``IP`` or, for Docker, ``IP:server:chromium:vnc:vlc`` ports). guitest does
the same calls in the same order with the same arguments (:class:`ProvidedMachine`), then waits for the
machine's server to answer.

Only ``desktop_env.providers`` is imported, and only when a provider is asked for: its ``__init__``
imports nothing but the abstract ``Provider`` and ``VMManager`` (checked against desktop-env 1.0.2), so
``pip install --no-deps desktop-env==1.0.2`` plus the provider's own packages (:data:`PACKAGES`) is
enough; desktop-env's evaluator dependencies (torch, easyocr, LibreOffice bindings, ...) are never needed.

Settings mirror ``DesktopEnv``'s constructor (:class:`ProviderSettings`). A provider may also be a class of
one's own: ``module:Class`` (constructed as ``Class(region)``, like desktop-env's), or one registered with
:func:`register` (a test's fake).
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping, Sequence

from ..live.protocol import EnvFailure
from .client import MachineClient

#: providers whose VM starts from a clean image: ``DesktopEnv`` does not revert before its first task on them
#: (``is_environment_used = False``); VMware and VirtualBox start from whatever state the VM is in, so they are
#: reverted before the first task too (as are providers of one's own)
CLEAN_START = frozenset({"docker", "aws", "gcp", "azure", "aliyun", "volcengine"})
#: the packages each desktop-env provider imports besides ``pip install --no-deps desktop-env==1.0.2``
PACKAGES = {
    "vmware": "filelock psutil requests tqdm",
    "virtualbox": "filelock psutil requests tqdm",
    "docker": "docker filelock psutil requests tqdm",
    "aws": "boto3 python-dotenv requests",
    "azure": "azure-identity azure-mgmt-compute azure-mgmt-network boto3 psutil",
    "aliyun": "alibabacloud_ecs20140526 alibabacloud_tea_openapi alibabacloud_tea_util python-dotenv requests",
    "volcengine": "volcengine-python-sdk python-dotenv",
}
#: path_to_vm is a local file for these providers (made absolute as ``DesktopEnv`` does, against the suite folder;
#: DesktopEnv also does it to a VirtualBox VM's name or UUID, which VirtualBox's provider accepts too: guitest does not)
LOCAL_FILE = frozenset({"vmware", "virtualbox", "docker"})
SERVER_PORT = 5000
POLL = 1.0

ProviderFactory = Callable[[Any], tuple[Any, Any]]
_registered: dict[str, ProviderFactory] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class ProviderSettings:
    """A provider and its VM, as ``DesktopEnv(provider_name, region, path_to_vm, snapshot_name, screen_size,
    headless, os_type)`` takes them: ``name`` (``provider_name``), ``region`` (cloud providers),
    ``path_to_vm`` (a ``.vmx`` file, a qcow2 image, an instance id; None: the provider's manager allocates one
    for this process, as ``DesktopEnv`` does), ``snapshot_name`` (None: ``init_state``; for AWS the AMI of
    desktop-env's ``IMAGE_ID_MAP`` for the region and screen size), ``screen_size``, ``headless``, ``os_type``;
    and guitest's ``ready_timeout``: seconds to wait for the machine's server after a start."""

    name: str
    region: str | None = None
    path_to_vm: str | None = None
    snapshot_name: str | None = None
    screen_size: tuple[int, int] = (1920, 1080)
    headless: bool = False
    os_type: str = "Ubuntu"
    ready_timeout: float = 300.0


KEYS = tuple(f.name for f in fields(ProviderSettings))


def register(name: str, factory: ProviderFactory) -> None:
    """Make ``factory(region) -> (manager or None, provider)`` the provider called ``name`` in this process
    (before desktop-env's own of that name)."""
    with _lock:
        _registered[name] = factory


def parse_pairs(pairs: Sequence[str] | None, where: str = "--env-provider-option") -> dict[str, Any]:
    """``["region=us-east-1", "headless=true"]`` as a dict of the values' types (true/false, numbers,
    ``1920x1080`` for ``screen_size``); ValueError naming the bad pair and the known keys."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or key not in KEYS or key == "name":
            raise ValueError(f"{where} {pair!r}: expected KEY=VALUE with KEY one of {', '.join(k for k in KEYS if k != 'name')}")
        out[key] = value.strip()
    return out


def settings_from(options: Mapping[str, Any], base_dir: str = ".") -> ProviderSettings:
    """The settings of a suite's ``env_options.provider`` (or the command line's): EnvFailure naming the bad key.
    A relative local ``path_to_vm`` is relative to ``base_dir``."""
    if not isinstance(options, Mapping):
        raise EnvFailure(f"env_options.provider must be a mapping of {', '.join(KEYS)}, got {type(options).__name__}")
    unknown = sorted(set(options) - set(KEYS))
    if unknown:
        raise EnvFailure(f"env_options.provider: unknown key(s) {', '.join(unknown)}; known: {', '.join(KEYS)}")
    name = str(options.get("name") or "").strip()
    if not name:
        raise EnvFailure("env_options.provider needs a name (--env-provider=NAME): vmware, virtualbox, docker, aws, azure, ... or module:Class")
    values: dict[str, Any] = {"name": name}
    for key in ("region", "path_to_vm", "snapshot_name", "os_type"):
        if options.get(key) not in (None, ""):
            values[key] = str(options[key])
    if options.get("headless") is not None:
        values["headless"] = _flag(options["headless"])
    if options.get("ready_timeout") is not None:
        try:
            values["ready_timeout"] = float(options["ready_timeout"])
        except (TypeError, ValueError):
            raise EnvFailure(f"env_options.provider.ready_timeout: expected seconds, got {options['ready_timeout']!r}") from None
    if options.get("screen_size") is not None:
        values["screen_size"] = _size(options["screen_size"])
    if values.get("path_to_vm"):
        values["path_to_vm"] = local_path(name, values["path_to_vm"], base_dir)
    return ProviderSettings(**values)


def local_path(name: str, path: str, base_dir: str) -> str:
    """``path_to_vm`` made absolute against ``base_dir`` where it names a local file (a ``.vmx``, a qcow2 image, a
    ``.vbox``), as ``DesktopEnv`` does; an instance id, or a VirtualBox VM's name or UUID, as it is."""
    kind = name.lower()
    if kind not in LOCAL_FILE or (kind == "virtualbox" and not (path.endswith(".vbox") or "/" in path or os.sep in path)):
        return path
    return os.path.abspath(os.path.join(base_dir, os.path.expandvars(os.path.expanduser(path))))


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise EnvFailure(f"env_options.provider.headless: expected true or false, got {value!r}")


def _size(value: Any) -> tuple[int, int]:
    try:
        if isinstance(value, str):
            width, height = value.lower().split("x")
        else:
            width, height = value
        return int(width), int(height)
    except (TypeError, ValueError):
        raise EnvFailure(f"env_options.provider.screen_size: expected WIDTHxHEIGHT or [width, height], got {value!r}") from None


def create(settings: ProviderSettings) -> tuple[Any, Any]:
    """``(manager or None, provider)`` for ``settings.name``: a registered one, ``module:Class``, or desktop-env's
    ``create_vm_manager_and_provider(name, region)``; EnvFailure saying what to install or set when it cannot."""
    name = settings.name
    with _lock:
        factory = _registered.get(name)
    if factory is not None:
        return _made(name, lambda: factory(settings.region))
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise EnvFailure(f"--env-provider={name}: cannot import {attr} from {module} ({type(exc).__name__}: {exc})") from None
        return None, _made(name, lambda: cls(settings.region))
    try:
        from desktop_env.providers import create_vm_manager_and_provider
    except ImportError:
        raise EnvFailure(
            f"--env-provider={name} uses desktop-env's providers: pip install --no-deps desktop-env==1.0.2"
            + (f" {PACKAGES[name.lower()]}" if name.lower() in PACKAGES else "")
            + " (only desktop_env.providers is imported, none of its evaluator dependencies)"
        ) from None
    try:
        made = create_vm_manager_and_provider(name, settings.region)
    except NotImplementedError:
        raise EnvFailure(f"--env-provider={name}: desktop-env has no such provider (it has {', '.join(sorted(PACKAGES))}); or give module:Class") from None
    except ImportError as exc:
        raise EnvFailure(
            f"--env-provider={name}: desktop-env's {name} provider needs {exc.name or exc}: pip install {PACKAGES.get(name.lower(), exc.name or '')}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - a provider checks its own setup when made (AWS_REGION unset, no Docker daemon)
        raise EnvFailure(f"--env-provider={name}: desktop-env's {name} provider cannot start: {type(exc).__name__}: {exc}") from None
    return made


def _made(name: str, make: Callable[[], Any]) -> Any:
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 - a provider of one's own failing is reported, not a traceback
        raise EnvFailure(f"--env-provider={name}: cannot make the provider: {type(exc).__name__}: {exc}") from None


def default_snapshot(settings: ProviderSettings) -> str:
    """The snapshot reverted to: the given one, else ``init_state`` (``DesktopEnv``'s default), else for AWS the
    AMI desktop-env's own scripts pass (``IMAGE_ID_MAP[region][screen_size]``)."""
    if settings.snapshot_name:
        return settings.snapshot_name
    if settings.name.lower() == "aws":
        try:
            from desktop_env.providers.aws.manager import IMAGE_ID_MAP

            images = IMAGE_ID_MAP.get(settings.region or "us-east-1") or {}
            image = images.get(tuple(settings.screen_size)) or images.get((1920, 1080))
        except Exception:  # noqa: BLE001 - then the user has to name it
            image = None
        if not image:
            raise EnvFailure(f"--env-provider=aws: give the AMI to revert to: --env-provider-option snapshot_name=ami-... (region {settings.region})")
        return str(image)
    return "init_state"


class ProviderFailure(EnvFailure):
    """A provider call failed (the VM could not be reverted, started or found): its machine leaves the pool."""


class ProvidedMachine:
    """One VM of a provider, used by one episode at a time (the caller leases it): started on first use and
    reverted before each later episode, as ``DesktopEnv.reset`` does; ``url`` is its server's once started."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self.path_to_vm = settings.path_to_vm
        self.url: str | None = None
        self._manager: Any = None
        self._provider: Any = None
        self._started = False
        self._used = False

    @property
    def key(self) -> str:
        """The machine's name in a pool (leases across processes share it only when they share its VM)."""
        where = self.settings.path_to_vm or f"process-{os.getpid()}"  # no path: the manager allocates one per process
        return f"{self.settings.name}:{where}"

    def prepare(self) -> str:
        """Bring the VM into its snapshot's state for an episode and return its server's URL: start it (and get a
        VM from the manager without ``path_to_vm``) the first time, revert it when an episode has used it (or
        when it does not start clean), start it again, get its address, wait for its server; ProviderFailure."""
        if self._provider is None:
            self._manager, self._provider = create(self.settings)
        if not self._started:
            if not self.path_to_vm:
                if self._manager is None:
                    raise ProviderFailure(f"--env-provider={self.settings.name}: give path_to_vm (--env-provider-option path_to_vm=...): a provider of one's own has no manager to allocate a VM")
                s = self.settings
                self.path_to_vm = str(self._call("get_vm_path", self._manager.get_vm_path, os_type=s.os_type, region=s.region, screen_size=tuple(s.screen_size)))
            self._start()
            self._started = True
            self._used = self.settings.name.lower() not in CLEAN_START
        if self._used:
            self._revert()
            self._start()
        self._used = True  # the episode about to run uses it: the next one reverts first
        assert self.url is not None
        return self.url

    def stop(self) -> None:
        """Stop the VM (``stop_emulator``, what ``DesktopEnv.close`` does); errors are the provider's to log."""
        if self._started and self._provider is not None:
            self._started = False
            try:
                self._provider.stop_emulator(self.path_to_vm)
            except Exception:  # noqa: BLE001 - a VM that cannot be stopped at the end must not hide the run's result
                pass

    def _revert(self) -> None:
        """``DesktopEnv._revert_to_snapshot``: revert, and follow a new path (the manager told, as there)."""
        s = self.settings
        path = self._call("revert_to_snapshot", self._provider.revert_to_snapshot, self.path_to_vm, default_snapshot(s))
        if path and path != self.path_to_vm:
            if self._manager is not None:
                self._call("delete_vm", self._manager.delete_vm, self.path_to_vm, s.region)
                self._call("add_vm", self._manager.add_vm, path, s.region)
                self._call("occupy_vm", self._manager.occupy_vm, path, os.getpid(), s.region)
            self.path_to_vm = str(path)

    def _start(self) -> None:
        """``DesktopEnv._start_emulator``: start the VM, read its address (``IP`` or ``IP:server:...`` ports), then
        wait until its server answers."""
        s = self.settings
        self._call("start_emulator", self._provider.start_emulator, self.path_to_vm, s.headless, s.os_type)
        address = str(self._call("get_ip_address", self._provider.get_ip_address, self.path_to_vm) or "")
        host, *ports = address.split(":")
        if not host:
            raise ProviderFailure(f"desktop-env's {s.name} provider gave no address for {self.path_to_vm}")
        try:
            port = int(ports[0]) if ports else SERVER_PORT
        except ValueError:
            raise ProviderFailure(f"desktop-env's {s.name} provider gave the address {address!r}, expected IP or IP:PORT:...") from None
        self.url = f"http://{host}:{port}"
        client = MachineClient(self.url, retries=0)
        deadline = time.monotonic() + s.ready_timeout
        while not client.probe():
            if time.monotonic() > deadline:
                raise ProviderFailure(f"the {s.name} VM {self.path_to_vm} was started but its server at {self.url} did not answer within {s.ready_timeout:g} s")
            time.sleep(POLL)

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except EnvFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - boto3, docker, vmrun: any failure of the provider is the machine's
            raise ProviderFailure(f"desktop-env's {self.settings.name} provider: {what}({self.path_to_vm}) failed: {type(exc).__name__}: {exc}") from None


def with_command_line(env_options: Mapping[str, Any], name: str | None, pairs: Sequence[str] | None) -> dict[str, Any]:
    """A suite's ``env_options`` with ``--env-provider`` (replaces the suite's provider) and ``--env-provider-option``
    pairs (override its keys) applied; a relative local ``path_to_vm`` given here is relative to the current folder.
    ValueError for a malformed pair."""
    options = dict(env_options)
    extra = parse_pairs(pairs)
    if not name and not extra:
        return options
    suite = options.get("provider")
    provider: dict[str, Any] = {"name": name} if name else dict(suite) if isinstance(suite, Mapping) else {}
    if extra.get("path_to_vm"):
        extra["path_to_vm"] = local_path(name or str(provider.get("name", "")), extra["path_to_vm"], os.getcwd())
    provider.update(extra)
    options["provider"] = provider
    return options
