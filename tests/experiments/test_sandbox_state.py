"""No memory between sandboxed processes: what one sandbox leaves in the kernel, a later
one cannot read.

Each sandbox here is a real one: a submission file imported by the grader's probe
(:func:`~dp_online_envs.lab.grading.submission.probe_submission`), which runs its code
after the identity switch and the limits, as a graded game does. The file reports what
it found by raising, and the probe's error frame carries that text back.
"""

from __future__ import annotations

import json
import os
import pathlib
import struct

import pytest

from dp_online_envs.lab.grading.submission import SubmissionError, probe_submission
from dp_online_envs.lab.isolation import IsolationLimits
from dp_online_envs.lab.sandbox import (
    _SYSCALLS,
    BLOCKED_CALLS,
    CLOSED_CHANNELS,
    SANDBOX_UIDS,
    Sandbox,
    SandboxUnavailable,
    seccomp_filter,
)

PRELUDE = '''
import ctypes, json, os, platform
libc = ctypes.CDLL(None, use_errno=True)
NR = {nr!r}[platform.machine()]
found = {{"uid": os.getuid()}}

def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(NR[name], *args)
    return r, ctypes.get_errno()
'''

# the user keyring (-4), the user-session keyring (-5) and the persistent keyring of the
# uid (keyctl 22, KEYCTL_GET_PERSISTENT, linked into the session keyring -3); then the
# other stores a process can leave behind: files in /scratch and /dev/shm, System V
# shared memory and message queues
WRITER = PRELUDE + '''
for ring in (-4, -5):
    found["add_key %d" % ring] = call("add_key", b"user", b"dp-online-mark", b"1", 1, ring)
found["persistent"] = call("keyctl", 22, -1, -3)
for where in ("/scratch/mark", "/dev/shm/mark"):
    with open(where, "w") as f:
        f.write("1")
found["shmget"] = call("shmget", 0x5EC, 4096, 0o1666)
found["msgget"] = call("msgget", 0x5EC, 0o1666)
raise RuntimeError("FOUND " + json.dumps(found))
'''

READER = PRELUDE + '''
found["request_key"] = call("request_key", b"user", b"dp-online-mark", None, 0)
with open("/proc/keys") as f:
    found["keys"] = [line for line in f if "dp-online-mark" in line]
found["files"] = [p for p in ("/scratch/mark", "/dev/shm/mark") if os.path.exists(p)]
found["shmget"] = call("shmget", 0x5EC, 4096, 0)
found["msgget"] = call("msgget", 0x5EC, 0)
raise RuntimeError("FOUND " + json.dumps(found))
'''

# every filtered call refused with EPERM (clone3: ENOSYS), a nested user namespace
# refused, the allowed calls still working
CALLS = PRELUDE + '''
for name in {blocked!r}:
    found[name] = call(name, 0, 0, 0, 0)
found["clone3"] = call("clone3", 0, 0)
found["clone NEWUSER"] = call("clone", 0x10000000 | 17, 0, 0, 0, 0)
found["getppid"] = os.getppid()
import threading
t = threading.Thread(target=lambda: None)
t.start()
t.join()
pid = os.fork()
if pid == 0:
    os._exit(0)
found["fork"] = os.waitpid(pid, 0)[1]
written = 0
try:  # /dev/shm: a tmpfs of the sandbox's own, 16 MB (8 MB files: each under RLIMIT_FSIZE)
    for i in range(8):
        with open("/dev/shm/fill%d" % i, "wb") as f:
            for _ in range(8):
                f.write(b"x" * 2**20)
                f.flush()
                written += 1
except OSError as exc:
    found["shm error"] = exc.errno
found["shm MB"] = written
raise RuntimeError("FOUND " + json.dumps(found))
'''


def _run(tmp_path: pathlib.Path, name: str, code: str) -> dict:
    """What the file's code found, in a sandbox of its own."""
    path = tmp_path / f"{name}.py"
    path.write_text(code.format(nr=_SYSCALLS, blocked=list(BLOCKED_CALLS)))
    with pytest.raises(SubmissionError) as caught:
        probe_submission(path, IsolationLimits(timeout=60.0, sandbox=Sandbox(files=(str(path),))))
    line = [ln for ln in caught.value.detail.splitlines() if "FOUND " in ln][-1]
    return json.loads(line.split("FOUND ", 1)[1])


EPERM, ENOSYS = 1, 38


def test_a_key_or_anything_else_left_by_one_sandbox_is_not_found_by_a_later_one(tmp_path):
    wrote = _run(tmp_path, "writer", WRITER)
    read = _run(tmp_path, "reader", READER)
    # the writer's attempts were refused, not just left unread
    for key in ("add_key -4", "add_key -5", "persistent", "shmget", "msgget"):
        assert wrote[key] == [-1, EPERM], (key, wrote)
    assert read["request_key"][0] == -1 and read["keys"] == [] and read["files"] == []
    assert read["shmget"][0] == -1 and read["msgget"][0] == -1
    if os.geteuid() == 0:  # each sandbox a uid of its own (on a host: none a user's)
        from dp_online_envs.lab.sandbox import _uid_pool

        pool = _uid_pool()
        assert all(u in pool for u in (wrote["uid"], read["uid"])) and len(pool) >= 1000
        assert wrote["uid"] != read["uid"]


def test_the_filtered_calls_are_refused_and_the_rest_work(tmp_path):
    found = _run(tmp_path, "calls", CALLS)
    for name in BLOCKED_CALLS:
        assert found[name] == [-1, EPERM], (name, found[name])
    assert found["clone3"] == [-1, ENOSYS]
    assert found["clone NEWUSER"] == [-1, EPERM]
    assert found["getppid"] > 0 and found["fork"] == 0
    assert found["shm error"] == 28 and found["shm MB"] <= 16  # ENOSPC at the tmpfs's size


def _interpret(program: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """What the classic BPF program returns for one call (the few opcodes it uses)."""
    ins = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    data = {0: nr, 4: arch, 16: arg0 & 0xFFFFFFFF}
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ins[pc]
        if code == 0x20:
            acc, pc = data[k], pc + 1
        elif code == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)


@pytest.mark.parametrize("machine, arch", [("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)])
def test_the_filter_refuses_exactly_the_listed_calls_on_every_number(machine, arch):
    program = seccomp_filter(machine)
    numbers = _SYSCALLS[machine]
    refused = {numbers[name] for name in BLOCKED_CALLS}
    for nr in range(600):
        got = _interpret(program, nr, arch)
        if nr in refused:
            assert got == 0x00050000 | EPERM, nr
        elif nr == numbers["clone3"]:
            assert got == 0x00050000 | ENOSYS
        else:
            assert got == 0x7FFF0000, nr
    clone = numbers["clone"]
    assert _interpret(program, clone, arch, 0x10000000 | 17) == 0x00050000 | EPERM
    assert _interpret(program, clone, arch, 0x01200011) == 0x7FFF0000  # fork's flags
    assert _interpret(program, 0, 0x40000003) == 0x80000000  # another ABI: killed
    if machine == "x86_64":
        assert _interpret(program, 0x40000000 | 250, arch) == 0x80000000  # x32 keyctl
    with pytest.raises(SandboxUnavailable, match=r"no seccomp filter for machine 'sparc'"):
        seccomp_filter("sparc")


def test_every_listed_channel_says_what_closes_it():
    assert all(text for text in CLOSED_CHANNELS.values())
    assert all(reason for reason in BLOCKED_CALLS.values())


@pytest.mark.parametrize("uid_map, gid_map, pool", [
    ("0 0 4294967295", "0 0 4294967295", SANDBOX_UIDS),  # the host's user namespace
    ("0 1000 1\n1 100000 65536", "0 1000 1\n1 100000 65536", range(1000, 65534)),  # rootless
    ("0 0 1\n1 100000 1000000", "0 0 1\n1 100000 2000000", range(65536, 1000001)),
    ("0 0 1\n65534 65534 1", "0 0 1\n65534 65534 1", range(65534, 65535)),  # nothing else
])
def test_a_uid_is_drawn_only_from_ids_the_user_namespace_maps(uid_map, gid_map, pool):
    from dp_online_envs.lab.sandbox import uid_pool

    assert uid_pool(uid_map, gid_map) == pool
