"""Times a command as a child process, for the inline Python of bench/seg_bench.sh: wall clock
and CPU (user + system of the child, from wait4, which load on the machine moves less)."""
import os
import time


def timed_runs(cmd, runs):
    """Lists of wall and CPU seconds of `runs` runs of cmd (output discarded); None when a run
    fails."""
    wall, cpu = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execvp(cmd[0], cmd)
        _, status, ru = os.wait4(pid, 0)
        wall.append(time.perf_counter() - t0)
        cpu.append(ru.ru_utime + ru.ru_stime)
        if status != 0:
            return None
    return wall, cpu
