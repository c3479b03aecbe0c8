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

Where guitest departs: ``DesktopEnv`` waits as long as each provider call takes (VMware's ``start_emulator`` and
``get_ip_address`` loop until the VM answers, with no limit), and as long as making the provider takes. guitest gives
every call a deadline (:data:`TIMEOUTS`, each a setting), making the provider (its constructor, or desktop-env's
``create_vm_manager_and_provider``) included, and checks what each returns; a call that overruns, raises or returns
something that is not what desktop-env's callers expect is a :class:`ProviderFailure` naming the provider, the call and
the VM, and the VM leaves the run's pool (its episodes are errors, which ``--lf`` runs again).
"""

from __future__ import annotations

import importlib
import ipaddress
import math
import os
import re
import threading
import time
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping, Sequence

from ..live.protocol import EnvFailure
from ..printable import printable
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
#: each provider call's deadline in seconds (a setting of the same name), from how long desktop-env 1.0.2's own providers
#: wait inside the call, with room to spare (docs/live_desktops.md, "Deadlines of the provider's calls", has the sources):
#: ``start_emulator`` (Docker waits up to 300 s for the VM's server inside it, after pulling its image the first time;
#: AWS 150 s, Aliyun 300 s for the instance to run), ``revert_to_snapshot`` (AWS launches a new instance and waits with
#: boto3's ``instance_running`` waiter, 40 x 15 s = 600 s), ``get_ip_address`` (Aliyun waits up to 300 s for the server
#: inside it; VMware's ``vmrun getGuestIPAddress -wait`` until the guest's tools answer), ``stop_emulator`` (Azure
#: deallocates in up to 10 x 15 s), and the manager's calls (``get_vm_path`` downloads OSWorld's VM image, several GB,
#: the first time), and making the provider (``create_timeout``: Docker's constructor connects to the Docker daemon,
#: ``docker.from_env()``; the others make clients or read settings)
TIMEOUTS = {"start_timeout": 600.0, "revert_timeout": 900.0, "address_timeout": 600.0, "stop_timeout": 300.0, "manager_timeout": 3600.0, "create_timeout": 300.0}
#: the setting that bounds each call
DEADLINE_OF = {
    "create": "create_timeout",
    "start_emulator": "start_timeout",
    "revert_to_snapshot": "revert_timeout",
    "get_ip_address": "address_timeout",
    "stop_emulator": "stop_timeout",
    "get_vm_path": "manager_timeout",
    "delete_vm": "manager_timeout",
    "add_vm": "manager_timeout",
    "occupy_vm": "manager_timeout",
}
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")

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
    and guitest's ``ready_timeout``: seconds to wait for the machine's server after a start, the deadlines of
    the provider's calls in seconds (:data:`TIMEOUTS`), and ``machines``: how many VMs each pytest process may have at
    once (a pool: made as episodes at once need them, reverted between episodes, stopped at the end; more than one needs
    the provider's manager to allocate them, so no ``path_to_vm``)."""

    name: str
    region: str | None = None
    path_to_vm: str | None = None
    snapshot_name: str | None = None
    screen_size: tuple[int, int] = (1920, 1080)
    headless: bool = False
    os_type: str = "Ubuntu"
    ready_timeout: float = 300.0
    start_timeout: float = TIMEOUTS["start_timeout"]
    revert_timeout: float = TIMEOUTS["revert_timeout"]
    address_timeout: float = TIMEOUTS["address_timeout"]
    stop_timeout: float = TIMEOUTS["stop_timeout"]
    manager_timeout: float = TIMEOUTS["manager_timeout"]
    create_timeout: float = TIMEOUTS["create_timeout"]
    machines: int = 1


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
    for key in ("ready_timeout", *TIMEOUTS):
        if options.get(key) is not None:
            values[key] = _seconds(key, options[key])
    if options.get("screen_size") is not None:
        values["screen_size"] = _size(options["screen_size"])
    if options.get("machines") is not None:
        values["machines"] = _count("machines", options["machines"])
        if values["machines"] > 1 and options.get("path_to_vm"):
            raise EnvFailure(
                f"env_options.provider.machines={values['machines']} with path_to_vm: one VM path is one machine; leave out "
                "path_to_vm so the provider's manager allocates the VMs (as OSWorld's DesktopEnv does without one)"
            )
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


def _seconds(key: str, value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not math.isfinite(seconds) or seconds <= 0:
        raise EnvFailure(f"env_options.provider.{key}: expected a number of seconds above 0, got {value!r}")
    return seconds


def _count(key: str, value: Any) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = 0
    if isinstance(value, bool) or number < 1:
        raise EnvFailure(f"env_options.provider.{key} (--env-provider-option {key}=N) must be a whole number, 1 or more, got {value!r}")
    return number


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
        raise EnvFailure(f"--env-provider={name}: desktop-env's {name} provider needs {exc.name or exc}: pip install {PACKAGES.get(name.lower(), exc.name or '')}") from None
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
    reverted before each later episode, as ``DesktopEnv.reset`` does; ``url`` is its server's once started.
    Every provider call runs within its deadline (:data:`DEADLINE_OF`) and what it returns is checked."""

    def __init__(self, settings: ProviderSettings, index: int = 0) -> None:
        self.settings = settings
        self.index = index  # which of the process's ``settings.machines`` VMs
        self.path_to_vm = settings.path_to_vm
        self.url: str | None = None
        self._manager: Any = None
        self._provider: Any = None
        self._started = False
        self._used = False
        self.hung: str | None = None  # the call still running past its deadline, if one did

    @property
    def key(self) -> str:
        """The machine's name in a pool (leases across processes share it only when they share its VM)."""
        where = self.settings.path_to_vm or f"process-{os.getpid()}"  # no path: the manager allocates one per process
        return f"{self.settings.name}:{where}" + (f"#{self.index}" if self.index else "")

    @property
    def shown(self) -> str:
        """How messages name the provider: ``--env-provider=NAME``."""
        return f"--env-provider={self.settings.name}"

    def prepare(self) -> str:
        """Bring the VM into its snapshot's state for an episode and return its server's URL: start it (and get a
        VM from the manager without ``path_to_vm``) the first time, revert it when an episode has used it (or
        when it does not start clean), start it again, get its address, wait for its server; ProviderFailure."""
        if self.hung is not None:
            raise ProviderFailure(f"{self.shown}: {self.hung} has not returned; this VM is not used again in this run")
        if self._provider is None:
            self._manager, self._provider = self._call("create", create, self.settings, label="making the provider")
        if not self._started:
            if not self.path_to_vm:
                if self._manager is None:
                    raise ProviderFailure(f"{self.shown}: give path_to_vm (--env-provider-option path_to_vm=...): a provider of one's own has no manager to allocate a VM")
                s = self.settings
                path = self._call("get_vm_path", self._manager.get_vm_path, os_type=s.os_type, region=s.region, screen_size=tuple(s.screen_size))
                if not isinstance(path, str) or not path.strip():
                    raise self._garbage("get_vm_path", path, "the path or id of a VM")
                self.path_to_vm = path
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
        """Stop the VM (``stop_emulator``, what ``DesktopEnv.close`` does) within ``stop_timeout``; errors are the
        provider's to log. A VM with a call still running past its deadline is left to the provider (calling it again
        beside that call could do anything); the message of that call said so."""
        if self._started and self._provider is not None and self.hung is None:
            self._started = False
            try:
                self._call("stop_emulator", self._provider.stop_emulator, self.path_to_vm)
            except EnvFailure:  # a VM that cannot be stopped at the end must not hide the run's result
                pass

    def _revert(self) -> None:
        """``DesktopEnv._revert_to_snapshot``: revert, and follow a new path (the manager told, as there)."""
        s = self.settings
        path = self._call("revert_to_snapshot", self._provider.revert_to_snapshot, self.path_to_vm, default_snapshot(s))
        if path is not None and not isinstance(path, str):
            raise self._garbage("revert_to_snapshot", path, "None or the VM's path (a new one when the VM moved)")
        if path and path != self.path_to_vm:
            if self._manager is not None:
                self._call("delete_vm", self._manager.delete_vm, self.path_to_vm, s.region)
                self._call("add_vm", self._manager.add_vm, path, s.region)
                self._call("occupy_vm", self._manager.occupy_vm, path, os.getpid(), s.region)
            self.path_to_vm = path

    def _start(self) -> None:
        """``DesktopEnv._start_emulator``: start the VM, read its address (``IP`` or ``IP:server:...`` ports), then
        wait until its server answers."""
        s = self.settings
        self._call("start_emulator", self._provider.start_emulator, self.path_to_vm, s.headless, s.os_type)
        address = self._call("get_ip_address", self._provider.get_ip_address, self.path_to_vm)
        host, port = self._address(address)
        self.url = f"http://{host}:{port}"
        client = MachineClient(self.url, retries=0)
        deadline = time.monotonic() + s.ready_timeout
        while not client.probe():
            if time.monotonic() > deadline:
                raise ProviderFailure(f"{self.shown}: the VM {self.path_to_vm} was started but its server at {self.url} did not answer within {s.ready_timeout:g} s (ready_timeout)")
            time.sleep(POLL)

    def _address(self, address: Any) -> tuple[str, int]:
        """``(host, server port)`` from what ``get_ip_address`` returned: ``IP`` or a host name, or Docker's
        ``IP:server:chromium:vnc:vlc`` (every port a number from 1 to 65535, as ``DesktopEnv`` reads them with ``int``)."""
        expected = "'IP', a host name, or 'IP:PORT:...' (Docker's IP:server:chromium:vnc:vlc)"
        if not isinstance(address, str):
            raise self._garbage("get_ip_address", address, expected)
        host, *ports = address.strip().split(":")
        numbers = [int(p) if p.isdigit() else 0 for p in ports]
        if not _is_host(host) or not all(0 < n < 65536 for n in numbers):
            raise self._garbage("get_ip_address", address, expected)
        return host, numbers[0] if numbers else SERVER_PORT

    def _garbage(self, what: str, value: Any, expected: str) -> ProviderFailure:
        return ProviderFailure(
            f"{self.shown}: {what}({self.path_to_vm}) returned {printable(repr(value))[:200]} ({type(value).__name__}), expected {expected}; the VM leaves this run (fix the provider and re-run with --lf)"
        )

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, label: str | None = None, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` on a thread of its own, waited for at most its deadline (:data:`DEADLINE_OF`): its
        result, or ProviderFailure when it raised or did not return in time (then the call goes on in the background,
        where guitest cannot stop it, and :attr:`hung` names it). ``label``: how messages name the call (default
        ``what(path_to_vm)``); an EnvFailure it raises is raised as it is."""
        key = DEADLINE_OF[what]
        seconds = float(getattr(self.settings, key))
        named = label or f"{what}({self.path_to_vm})"
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                outcome["value"] = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - boto3, docker, vmrun, SystemExit: any failure of the provider is the machine's
                outcome["error"] = exc
            finally:
                done.set()

        # a daemon thread: a call that never returns must not keep the process from ending
        threading.Thread(target=run, name=f"guitest-provider-{what}", daemon=True).start()
        if not done.wait(seconds):
            self.hung = named
            raise ProviderFailure(
                f"{self.shown}: {named} did not return within {seconds:g} s (--env-provider-option {key}=SECONDS); "
                "the VM leaves this run and its episodes are errors (re-run them with --lf); the call may still be running in the "
                "provider: stop the VM with the provider's own tools if it does not stop by itself"
            )
        error = outcome.get("error")
        if isinstance(error, EnvFailure):
            raise error
        if error is not None:
            raise ProviderFailure(f"{self.shown}: {named} failed: {type(error).__name__}: {printable(str(error))[:300]}") from None
        return outcome.get("value")


def _is_host(host: str) -> bool:
    """Whether ``host`` is an IPv4 address or a host name (the part before the first ``:`` of desktop-env's address)."""
    try:
        ipaddress.IPv4Address(host)
        return True
    except ValueError:
        return bool(_HOST.fullmatch(host)) and not host.replace(".", "").isdigit()


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
