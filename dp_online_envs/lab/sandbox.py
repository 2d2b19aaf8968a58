"""A bubblewrap sandbox for an untrusted isolated process (a graded submission).

:class:`Sandbox` describes what the process may reach; :class:`~dp_online_envs.lab.isolation.
IsolatedLearner` starts its agent process through :meth:`Sandbox.command` when its
:class:`~dp_online_envs.lab.isolation.IsolationLimits` carry one. Inside:

* **files**: an empty read-only root holding only the system libraries (``/usr`` and
  its ``/lib`` links), the Python installation (``sys.base_prefix``, ``sys.prefix``),
  the directories of :attr:`Sandbox.packages` and a read-only *copy* of each of
  :attr:`Sandbox.files`, each at its own path; a fresh ``/proc`` (its own processes
  only), a minimal ``/dev`` and a writable scratch directory ``/scratch`` (a tmpfs of
  :attr:`Sandbox.scratch_bytes`, gone with the process);
* **processes**: a PID namespace of its own (no grader process is visible; when the
  agent's process ends, every process it started is killed by the kernel), killed when
  the grader's process dies (``--die-with-parent``), ``RLIMIT_NPROC``,
  ``RLIMIT_NOFILE`` and ``RLIMIT_FSIZE`` set before any submission code runs;
* **network**: none (a network namespace of its own: only its own loopback, where the
  host's listening sockets do not exist); no System V IPC or hostname of the host;
* **identity**: a user without capabilities, of its own. Started by root, the sandbox
  keeps the host's user namespace and the agent's process switches itself, before it
  reads its setup, to a uid drawn at random for that process from
  :data:`SANDBOX_UIDS` (in a container that maps fewer ids: from the ids it maps,
  :func:`uid_pool`; a root-mapped uid would be exempt from ``RLIMIT_NPROC``), so
  what the kernel counts or keeps per uid (``RLIMIT_NPROC``, keyrings, pipe and
  message-queue quotas) is not shared with any other sandboxed process; started by
  another user, a fresh user namespace maps that user to ``nobody`` (65534);
* **system calls**: a seccomp filter (:func:`seccomp_filter`, :data:`BLOCKED_CALLS`)
  refuses the calls that reach kernel state outliving the process (the keyrings) or
  memory that no process's address space counts (``memfd``, System V shared memory
  and message queues, a nested user namespace's own ``tmpfs``);
* **environment**: only ``PATH``, ``HOME``, ``TMPDIR``, ``LANG`` and one-thread settings
  for the numerical libraries. Nothing of the grader's environment, files or arguments
  is passed (bubblewrap itself is started with that environment, so its own
  ``/proc/1/environ`` holds nothing either).

:func:`sandbox_unavailable` says why a sandbox cannot start here (``None`` if it can).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import pathlib
import platform
import secrets
import shutil
import struct
import subprocess
import sys

from dp_online_envs.validation import check_int

#: The uid and gid the sandboxed process runs as inside a user namespace of its own
#: (``nobody``; the sandbox started by a user other than root).
SANDBOX_UID = 65534
#: The uids (and gids) a sandboxed process started by root runs as: one drawn at random
#: per process, mapped to no user of the host (two processes share one with probability
#: 2^-29 per pair).
SANDBOX_UIDS = range(2**30, 2**30 + 2**29)
#: The sandbox's writable directory (its ``HOME``, ``TMPDIR`` and working directory).
SCRATCH = "/scratch"
#: The environment of the sandboxed process (and of bubblewrap itself).
SANDBOX_ENV = {"PATH": "/usr/bin:/bin", "HOME": SCRATCH, "TMPDIR": SCRATCH,
               "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1"}
#: Host directories that may be symbolic links into ``/usr`` (merged ``/usr``).
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start on this machine (the message says why, in one line)."""


# ---------------------------------------------------------------------- seccomp
#: The system calls the sandbox refuses (``EPERM``) and why: each reaches kernel state
#: that outlives the process or memory no process's address space counts. Every other
#: channel is closed by a namespace (see :data:`CLOSED_CHANNELS`).
BLOCKED_CALLS = {
    "add_key": "the keyrings (user, user-session, persistent) outlive the process",
    "request_key": "the keyrings outlive the process",
    "keyctl": "the keyrings outlive the process (and the persistent keyring by days)",
    "unshare": "a nested user namespace would give capabilities there: its own tmpfs "
               "mounts hold memory that no address space counts",
    "memfd_create": "its pages count in no address space while unmapped",
    "memfd_secret": "its pages count in no address space while unmapped",
    "shmget": "System V segments hold memory while attached to no process",
    "msgget": "System V message queues hold memory outside any process",
}
#: Persistent or shared kernel state a sandboxed process could reach, and what closes it.
CLOSED_CHANNELS = {
    "keyrings (add_key, keyctl, request_key)": "refused by the seccomp filter; the uid is "
                                               "also one of its own",
    "files": "a read-only root; /scratch and /dev/shm are tmpfs of the sandbox, gone with it",
    "System V IPC and POSIX message queues": "an IPC namespace of its own, gone with the "
                                             "sandbox (shmget and msgget refused)",
    "sockets (TCP, UDP, UNIX abstract)": "a network namespace of its own",
    "processes and signals": "a PID namespace of its own: every process dies with the "
                             "agent's",
    "per-uid counts (RLIMIT_NPROC, pipe pages, message-queue bytes)": "a uid of its own",
    "nested namespaces (a user namespace's mounts)": "clone with CLONE_NEWUSER and "
                                                     "unshare refused, clone3 unavailable",
    "page cache of the shared read-only files": "NOT closed: a process can warm a file "
                                                "and a later one time its reads (a timing "
                                                "channel no namespace removes)",
}
#: System call numbers of the filtered calls, per machine (``platform.machine()``).
_SYSCALLS = {
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
               "memfd_create": 319, "memfd_secret": 447, "shmget": 29, "msgget": 68,
               "clone": 56, "clone3": 435},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97,
                "memfd_create": 279, "memfd_secret": 447, "shmget": 194, "msgget": 186,
                "clone": 220, "clone3": 435},
}
#: ``AUDIT_ARCH_*`` of each machine: a call made through another ABI kills the process.
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_CLONE_NEWUSER = 0x10000000
_EPERM, _ENOSYS = 1, 38
_RET_ALLOW, _RET_ERRNO, _RET_KILL = 0x7FFF0000, 0x00050000, 0x80000000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06


def seccomp_filter(machine: str | None = None) -> bytes:
    """The sandbox's seccomp program (classic BPF, as bubblewrap's ``--seccomp`` reads it).

    Refuses each of :data:`BLOCKED_CALLS` with ``EPERM``, ``clone`` with
    ``CLONE_NEWUSER`` with ``EPERM`` and ``clone3`` (whose flags a filter cannot read)
    with ``ENOSYS`` (the C library then uses ``clone``); kills the process on a call of
    another ABI (x32, 32-bit) whose numbers differ; allows the rest.

    Args:
        machine: ``platform.machine()`` (``None``: this one).

    Raises:
        SandboxUnavailable: No filter for this machine.
    """
    machine = platform.machine() if machine is None else machine
    if machine not in _SYSCALLS:
        raise SandboxUnavailable(f"no seccomp filter for machine {machine!r} (the sandbox "
                                 f"knows {sorted(_SYSCALLS)})")
    nr = _SYSCALLS[machine]
    prog: list[tuple[int, int, int, int]] = []

    def ret(value: int) -> None:
        prog.append((_RET, 0, 0, value))

    prog.append((_LD_ABS, 0, 0, 4))  # seccomp_data.arch
    prog.append((_JEQ, 1, 0, _AUDIT_ARCH[machine]))
    ret(_RET_KILL)
    prog.append((_LD_ABS, 0, 0, 0))  # seccomp_data.nr
    if machine == "x86_64":  # the x32 ABI: numbers with bit 30 set
        prog.append((_JGE, 0, 1, 0x40000000))
        ret(_RET_KILL)
    for name in BLOCKED_CALLS:
        prog.append((_JEQ, 0, 1, nr[name]))
        ret(_RET_ERRNO | _EPERM)
    prog.append((_JEQ, 0, 1, nr["clone3"]))
    ret(_RET_ERRNO | _ENOSYS)
    prog.append((_JEQ, 0, 3, nr["clone"]))
    prog.append((_LD_ABS, 0, 0, 16))  # the low half of args[0]: clone's flags
    prog.append((_JSET, 0, 1, _CLONE_NEWUSER))
    ret(_RET_ERRNO | _EPERM)
    ret(_RET_ALLOW)
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)



@dataclasses.dataclass(frozen=True)
class Sandbox:
    """What a sandboxed agent process may reach (see the module docstring).

    Attributes:
        files: Files the process may read (a read-only copy each, at its own path).
        packages: Top-level packages importable in the sandbox (their directories are
            bound read-only); third-party libraries come with ``sys.prefix``.
        scratch_bytes: Size of the writable ``/scratch`` tmpfs.
        file_bytes: ``RLIMIT_FSIZE``: the largest file the process may write.
        shm_bytes: Size of the sandbox's own ``/dev/shm`` tmpfs.
        processes: ``RLIMIT_NPROC``: processes and threads of the sandbox (its uid is its
            own), the agent's process included.
        open_files: ``RLIMIT_NOFILE``: open file descriptors per process.
    """

    files: tuple[str, ...] = ()
    packages: tuple[str, ...] = ("dp_online_envs", "agents")
    scratch_bytes: int = 64 * 2**20
    file_bytes: int = 16 * 2**20
    shm_bytes: int = 16 * 2**20
    processes: int = 4
    open_files: int = 64

    def __post_init__(self) -> None:
        for name in ("scratch_bytes", "file_bytes", "shm_bytes", "processes", "open_files"):
            check_int(name, getattr(self, name), 1)
        object.__setattr__(self, "files", tuple(str(pathlib.Path(f).resolve())
                                                for f in self.files))

    @property
    def drops_privileges(self) -> bool:
        """Whether the sandboxed process starts as root and must switch to
        :data:`SANDBOX_UID` itself (the grader runs as root)."""
        return os.geteuid() == 0

    def rlimits(self) -> dict[str, int]:
        """The resource limits the sandboxed process sets on itself, by ``resource`` name."""
        return {"RLIMIT_NPROC": self.processes, "RLIMIT_NOFILE": self.open_files,
                "RLIMIT_FSIZE": self.file_bytes}

    def python_path(self) -> list[str]:
        """The directories put first on the sandboxed interpreter's ``sys.path``."""
        return sorted({str(pathlib.Path(d).parent) for d in self._package_dirs()})

    def command(self, argv: list[str]) -> tuple[list[str], list[int]]:
        """The bubblewrap command that runs ``argv`` (an interpreter command) sandboxed.

        Returns:
            ``(command, fds)``: ``fds`` are open descriptors of :attr:`files` that the
            command reads (pass them to the child, close them after it started).

        Raises:
            SandboxUnavailable: ``bwrap`` is not installed, or a file cannot be read.
        """
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed "
                                     "(Debian/Ubuntu: apt-get install bubblewrap)")
        cmd = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup-try", "--die-with-parent", "--new-session",
               "--hostname", "sandbox"]
        if self.drops_privileges:
            cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            cmd += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        cmd += ["--ro-bind", "/usr", "/usr"]
        for link in _SYSTEM_LINKS:
            if os.path.islink(link):
                cmd += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                cmd += ["--ro-bind", link, link]
        cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
        binds = _read_only_dirs(tuple(self._package_dirs()))
        # the directories leading to each bound path, traversable by the sandbox user
        # whatever the umask (bubblewrap creates missing ones as the umask says)
        parents = sorted({str(a) for p in (*binds, *self.files)
                          for a in pathlib.PurePosixPath(p).parents if str(a) != "/"},
                         key=lambda d: (d.count("/"), d))
        for directory in parents:
            cmd += ["--perms", "0755", "--dir", directory]
        for path in binds:
            cmd += ["--ro-bind", path, path]
        fds = []
        try:
            for path in self.files:
                fds.append(os.open(path, os.O_RDONLY))
                cmd += ["--perms", "0444", "--ro-bind-data", str(fds[-1]), path]
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            raise SandboxUnavailable(f"cannot read {exc.filename}: {exc.strerror}") from None
        try:
            fds.append(_data_fd(seccomp_filter()))
        except SandboxUnavailable:
            for fd in fds:
                os.close(fd)
            raise
        cmd += ["--seccomp", str(fds[-1]),
                "--proc", "/proc", "--dev", "/dev",
                "--perms", "1777", "--size", str(self.shm_bytes), "--tmpfs", "/dev/shm",
                "--perms", "1777", "--size", str(self.scratch_bytes), "--tmpfs", SCRATCH,
                "--remount-ro", "/", "--chdir", SCRATCH, "--", *argv]
        return cmd, fds

    def process_uid(self) -> int | None:
        """The uid the agent's process switches to (a fresh one per call, drawn from
        :func:`uid_pool`: :data:`SANDBOX_UIDS` in the host's user namespace), or ``None``
        when the sandbox's user namespace maps the caller to :data:`SANDBOX_UID` itself
        (started by a user other than root)."""
        if not self.drops_privileges:
            return None
        pool = _uid_pool()
        return pool[secrets.randbelow(len(pool))]

    def describe(self) -> str:
        """One line: what the sandbox allows (for reports)."""
        return (f"bubblewrap sandbox: a user of its own, no network, own PID and IPC "
                f"namespaces, keyrings and memfd refused (seccomp), read-only "
                f"system and Python libraries plus the submission's own file, "
                f"{self.scratch_bytes // 2**20} MB scratch, {self.shm_bytes // 2**20} MB "
                f"/dev/shm, at most {self.processes} processes, {self.open_files} open "
                f"files, {self.file_bytes // 2**20} MB per file")

    def _package_dirs(self) -> list[str]:
        out = []
        for name in self.packages:
            spec = importlib.util.find_spec(name)
            if spec is None or not spec.submodule_search_locations:
                raise SandboxUnavailable(f"package {name!r} not found: it cannot be bound "
                                         "into the sandbox")
            out.append(str(pathlib.Path(list(spec.submodule_search_locations)[0]).resolve()))
        return out


def uid_pool(uid_map: str, gid_map: str) -> range:
    """The ids a sandboxed process started by root draws its uid and gid from, given this
    user namespace's ``/proc/self/uid_map`` and ``gid_map`` (an id must be mapped to
    switch to it): :data:`SANDBOX_UIDS` where both map all of it (the host's own user
    namespace); else the widest range of ids both map from 1000 to 65533 or above 65535
    (a container's mapped ids, e.g. 1000-65533 of a rootless one's 0-65535); else
    :data:`SANDBOX_UID` alone (keyrings are still refused, but per-uid counts are then
    shared by the sandboxes running at once)."""
    def ranges(text: str) -> list[range]:
        out = []
        for line in text.splitlines():
            fields = line.split()
            if len(fields) == 3:
                start, count = int(fields[0]), int(fields[2])
                out.append(range(start, start + count))
        return out

    common = [range(max(a.start, b.start), min(a.stop, b.stop))
              for a in ranges(uid_map) for b in ranges(gid_map)]
    if any(r.start <= SANDBOX_UIDS.start and SANDBOX_UIDS.stop <= r.stop for r in common):
        return SANDBOX_UIDS
    pieces = [range(max(r.start, lo), min(r.stop, hi)) for r in common
              for lo, hi in ((1000, 65534), (65536, 2**31))]
    widest = max(pieces, key=len, default=range(0))
    return widest if len(widest) >= 1000 else range(SANDBOX_UID, SANDBOX_UID + 1)


@functools.cache
def _uid_pool() -> range:
    """:func:`uid_pool` of this process's user namespace."""
    try:
        with open("/proc/self/uid_map") as u, open("/proc/self/gid_map") as g:
            return uid_pool(u.read(), g.read())
    except OSError:
        return range(SANDBOX_UID, SANDBOX_UID + 1)


def _data_fd(data: bytes) -> int:
    """A descriptor to read ``data`` from (a pipe's read end; ``data`` fits its buffer)."""
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read


@functools.cache
def _read_only_dirs(packages: tuple[str, ...]) -> list[str]:
    """The interpreter's prefixes and the package directories, outside ``/usr``, without
    directories nested in one another."""
    candidates = {str(pathlib.Path(p).resolve()) for p in
                  (sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix,
                   pathlib.Path(os.path.realpath(sys.executable)).parent.parent)}
    candidates |= set(packages)
    kept = sorted(p for p in candidates if p != "/usr" and not p.startswith("/usr/"))
    return [p for p in kept if not any(p != q and p.startswith(q.rstrip("/") + "/")
                                       for q in kept)]


@functools.cache
def sandbox_unavailable() -> str | None:
    """Why a :class:`Sandbox` cannot start here, in one line; ``None`` when it can.

    Starts a trivial sandboxed interpreter once per process (the answer is cached).
    """
    try:
        sandbox = Sandbox()
        cmd, fds = sandbox.command([sys.executable, "-I", "-c", "pass"])
    except SandboxUnavailable as exc:
        return str(exc)
    try:
        done = subprocess.run(cmd, env=SANDBOX_ENV, capture_output=True, timeout=60,
                              check=False, pass_fds=fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not run: {exc}"
    finally:
        for fd in fds:
            os.close(fd)
    if done.returncode != 0:
        text = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[0]
        return f"bubblewrap could not start a sandbox (exit code {done.returncode}): {text}"
    return None


__all__ = ["BLOCKED_CALLS", "CLOSED_CHANNELS", "SANDBOX_ENV", "SANDBOX_UID", "SANDBOX_UIDS",
           "SCRATCH", "Sandbox", "SandboxUnavailable", "sandbox_unavailable", "seccomp_filter",
           "uid_pool"]
