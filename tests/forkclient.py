"""The stand-in for one `python -m dayflow ARGS` forked by tests/forkserver.py.

Run as `python -I -S forkclient.py SOCKET MODULE ARGS...` (no site, no imports of its own to
speak of: it starts in milliseconds). It passes its stdin, stdout and stderr, its argv,
environment, working directory and umask to the server, which forks the dayflow process
(`python -m MODULE ARGS`: MODULE is `dayflow`, or a test's driver of the preloaded modules such
as `tests.batchdriver`); it forwards the signals it is sent to that process and ends as it
ended: with its exit code, or killed by the same signal (a child that SIGKILLed itself is seen
by the test as killed by SIGKILL). Killed itself, its child is killed too (the server's waiter
sees the connection close). When the server is not there or declines (an environment it was
not started with), it execs `python -m MODULE ARGS` in its own place.
"""

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def main() -> None:
    path, module, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    real = [sys.executable, "-m", module, *args]
    umask = os.umask(0)
    os.umask(umask)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        body = json.dumps(
            {
                "module": module,
                "argv": args,
                "env": dict(os.environ),
                "cwd": os.getcwd(),
                "umask": umask,
            }
        ).encode()
        socket.send_fds(conn, [struct.pack("!Q", len(body))], [0, 1, 2])
        conn.sendall(body)
        replies = conn.makefile("rb")
        first = replies.readline().split()
    except OSError:
        first = []
    if first[:1] != [b"pid"]:
        conn.close()
        os.execv(sys.executable, real)
    pid = int(first[1])
    for number in FORWARDED:
        signal.signal(number, lambda n, _frame: os.kill(pid, n))
    last = replies.readline().split()
    if last[:1] != [b"status"]:  # the waiter is gone: how the child ended is not known
        os._exit(1)
    status = int(last[1])
    if os.WIFSIGNALED(status):
        killed_by = os.WTERMSIG(status)
        if killed_by not in (signal.SIGKILL, signal.SIGSTOP):  # their action cannot change
            signal.signal(killed_by, signal.SIG_DFL)
        os.kill(os.getpid(), killed_by)
    os._exit(os.waitstatus_to_exitcode(status))


main()
