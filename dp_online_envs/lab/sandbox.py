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
* **identity**: user ``nobody`` (65534) without capabilities. Started by root, the
  sandbox keeps the host's user namespace and the agent's process switches to uid
  65534 itself before it reads its setup (a root-mapped uid would be exempt from
  ``RLIMIT_NPROC``); started by another user, a user namespace maps that user to 65534;
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
import shutil
import subprocess
import sys

from dp_online_envs.validation import check_int

#: The uid and gid the sandboxed process runs as (``nobody``).
SANDBOX_UID = 65534
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


@dataclasses.dataclass(frozen=True)
class Sandbox:
    """What a sandboxed agent process may reach (see the module docstring).

    Attributes:
        files: Files the process may read (a read-only copy each, at its own path).
        packages: Top-level packages importable in the sandbox (their directories are
            bound read-only); third-party libraries come with ``sys.prefix``.
        scratch_bytes: Size of the writable ``/scratch`` tmpfs.
        file_bytes: ``RLIMIT_FSIZE``: the largest file the process may write.
        processes: ``RLIMIT_NPROC``: processes and threads of the sandbox user.
        open_files: ``RLIMIT_NOFILE``: open file descriptors per process.
    """

    files: tuple[str, ...] = ()
    packages: tuple[str, ...] = ("dp_online_envs", "agents")
    scratch_bytes: int = 64 * 2**20
    file_bytes: int = 16 * 2**20
    processes: int = 32
    open_files: int = 64

    def __post_init__(self) -> None:
        for name in ("scratch_bytes", "file_bytes", "processes", "open_files"):
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
        cmd += ["--proc", "/proc", "--dev", "/dev",
                "--perms", "1777", "--size", str(self.scratch_bytes), "--tmpfs", SCRATCH,
                "--remount-ro", "/", "--chdir", SCRATCH, "--", *argv]
        return cmd, fds

    def describe(self) -> str:
        """One line: what the sandbox allows (for reports)."""
        return (f"bubblewrap sandbox: user nobody, no network, own PID namespace, read-only "
                f"system and Python libraries plus the submission's own file, "
                f"{self.scratch_bytes // 2**20} MB scratch, at most {self.processes} "
                f"processes, {self.open_files} open files, "
                f"{self.file_bytes // 2**20} MB per file")

    def _package_dirs(self) -> list[str]:
        out = []
        for name in self.packages:
            spec = importlib.util.find_spec(name)
            if spec is None or not spec.submodule_search_locations:
                raise SandboxUnavailable(f"package {name!r} not found: it cannot be bound "
                                         "into the sandbox")
            out.append(str(pathlib.Path(list(spec.submodule_search_locations)[0]).resolve()))
        return out


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
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not run: {exc}"
    if done.returncode != 0:
        text = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[0]
        return f"bubblewrap could not start a sandbox (exit code {done.returncode}): {text}"
    return None


__all__ = ["SANDBOX_ENV", "SANDBOX_UID", "SCRATCH", "Sandbox", "SandboxUnavailable",
           "sandbox_unavailable"]
