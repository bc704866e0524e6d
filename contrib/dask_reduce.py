#!/usr/bin/python3
"""Reduce a segmentation test set on a Dask cluster: shards of the manifest run `calscope reduce`
on the workers, next to the data, and the shard statistics are merged into one file.

    contrib/dask_reduce.py (--scheduler ADDRESS | --local N) -o STATS [--shards S]
                         [--calscope PATH] [--data-root DIR] [--fine F] [--threads N]
                         [--label-values LIST | --regions SPEC] MANIFEST.csv [-- REDUCE_FLAGS...]

Why a cluster needs to do nothing else: a statistics file holds, per case, sums (counts, sum of p,
sum of y per fine bin; the Brier / NLL sums). Sums of disjoint sets of cases add up, and every
metric calscope reports is computed from them — so reducing shards anywhere and merging them
(`calscope reduce --merge`, which copies each case's sums) gives the very file one machine would
write. No voxel ever crosses the network: a worker reads its cases from storage it can see and
sends back a statistics file of a few tens of KB per case.

Each task writes its shard's manifest beside the original (in the manifest's folder as the
worker sees it: the same path, or --data-root), so the relative paths resolve and are recorded
in the statistics header exactly as a single run records them; when that folder is read-only
the shard manifest goes to a temporary folder with absolute paths (the numbers are the same,
the recorded paths are absolute: the script says so). The shard manifest is removed afterwards.

--local N starts a LocalCluster of N workers in this process (threads, one task each: the work
is in the calscope subprocess, so the GIL does not matter). --scheduler ADDRESS connects to a
running cluster (`dask scheduler`, then `dask worker ADDRESS --nthreads 1` on each machine).
Exit status: 0 on success, 1 when a shard's reduce or the merge fails (each failure shown with
its worker and calscope's stderr), 2 on a usage error.
"""
import argparse
import csv
import io
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(msg, status=2):
    print(f"dask_reduce: {msg}", file=sys.stderr)
    sys.exit(status)


def default_calscope():
    """CALSCOPE, else this checkout's build/calscope, else `calscope` on the workers' PATH."""
    if os.environ.get("CALSCOPE"):
        return os.path.abspath(os.environ["CALSCOPE"])
    built = os.path.join(ROOT, "build", "calscope")
    return built if os.access(built, os.X_OK) else "calscope"


def read_manifest(path):
    """(header, rows) of a manifest; rows as lists of fields. Checks only what sharding needs
    (a case column); calscope reduce checks the rest and says where."""
    try:
        with open(path, newline="") as f:
            rd = csv.reader(f)
            header = next(rd, None)
            rows = [r for r in rd if r and any(x.strip() for x in r)]
    except OSError as e:
        fail(f"{path}: cannot open: {e.strerror}")
    if not header or "case" not in [h.strip().lower() for h in header]:
        fail(f"{path}: not a manifest (the header needs the columns case,probs,labels)")
    if not rows:
        fail(f"{path}: no cases")
    return header, rows


def shard_rows(rows, n):
    """n contiguous, nearly equal shards (in manifest order)."""
    n = max(1, min(n, len(rows)))
    q, r = divmod(len(rows), n)
    out, i = [], 0
    for k in range(n):
        size = q + (1 if k < r else 0)
        out.append(rows[i:i + size])
        i += size
    return out


def reduce_shard(calscope, data_dir, header, rows, flags, tag):
    """Runs on a worker: writes the shard manifest beside the original, runs calscope reduce on
    it and returns a dict (rc, stderr, stats bytes, host, where the manifest went). Never
    raises for a failing reduce: the client reports every shard's failure with its stderr."""
    import socket
    host = socket.gethostname()
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    tmp = tempfile.mkdtemp(prefix="calscope-dask-")
    manifest = os.path.join(data_dir, f".calscope-shard-{tag}.csv")
    absolute = False
    try:
        try:
            with open(manifest, "x") as f:
                f.write(text.getvalue())
        except OSError:
            # read-only data folder: absolute paths from a private folder
            absolute = True
            manifest = os.path.join(tmp, "shard.csv")
            cols = [h.strip().lower() for h in header]
            text = io.StringIO()
            w = csv.writer(text, lineterminator="\n")
            w.writerow(header)
            for r in rows:
                w.writerow([os.path.join(data_dir, v) if cols[i] in ("probs", "labels")
                            and i < len(cols) else v for i, v in enumerate(r)])
            with open(manifest, "w") as f:
                f.write(text.getvalue())
        out = os.path.join(tmp, "shard.stats")
        try:
            p = subprocess.run([calscope, "reduce", "-o", out] + flags + [manifest],
                               capture_output=True, text=True)
        except OSError as e:
            return {"rc": 127, "stderr": f"cannot run {calscope}: {e.strerror}", "data": None,
                    "host": host, "absolute": absolute}
        data = None
        if p.returncode == 0:
            with open(out, "rb") as f:
                data = f.read()
        return {"rc": p.returncode, "stderr": p.stderr, "data": data, "host": host,
                "absolute": absolute}
    finally:
        if not absolute:
            try:
                os.unlink(manifest)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(
        prog="dask_reduce.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", metavar="ADDRESS", help="e.g. tcp://10.0.0.5:8786")
    where.add_argument("--local", type=int, metavar="N", help="a LocalCluster of N workers")
    ap.add_argument("-o", dest="out", required=True, metavar="STATS",
                    help="the merged statistics file ('-' = stdout, .gz = gzip)")
    ap.add_argument("--shards", type=int, help="number of shards (default 2 per worker)")
    ap.add_argument("--calscope", default=default_calscope(),
                    help="calscope on the workers (default: CALSCOPE, ./build/calscope, calscope)")
    ap.add_argument("--data-root", metavar="DIR",
                    help="the manifest's folder as the workers see it (default: the same path)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds to wait for the scheduler / the workers to start (default 120)")
    ap.add_argument("--fine", help="passed to calscope reduce")
    ap.add_argument("--threads", help="passed to calscope reduce (threads per shard)")
    grp = ap.add_mutually_exclusive_group()
    grp.add_argument("--label-values", help="passed to calscope reduce")
    grp.add_argument("--regions", help="passed to calscope reduce")
    ap.add_argument("manifest", metavar="MANIFEST.csv")
    a = ap.parse_args(argv)
    if a.local is not None and a.local < 1:
        ap.error("--local N needs N >= 1")
    if a.shards is not None and a.shards < 1:
        ap.error("--shards needs S >= 1")

    try:
        import distributed
    except ImportError:
        fail("python3-distributed is not installed (tools/install-deps.sh installs it)")

    header, rows = read_manifest(a.manifest)
    flags = []
    for name in ("fine", "threads", "label_values", "regions"):
        v = getattr(a, name)
        if v is not None:
            flags += ["--" + name.replace("_", "-"), v]
    flags += extra
    local_dir = os.path.dirname(os.path.abspath(a.manifest))
    data_dir = a.data_root or local_dir

    cluster = None
    try:
        if a.local is not None:
            cluster = distributed.LocalCluster(
                n_workers=a.local, threads_per_worker=1, processes=False,
                dashboard_address=None, silence_logs=logging.ERROR)
            client = distributed.Client(cluster, timeout=a.timeout)
        else:
            client = distributed.Client(a.scheduler, timeout=a.timeout)
    except (OSError, TimeoutError) as e:
        fail(f"cannot reach the scheduler {a.scheduler or '(local)'}: {e}", 1)
    try:
        client.wait_for_workers(1, timeout=a.timeout)
        n_workers = len(client.scheduler_info()["workers"])
        shards = shard_rows(rows, a.shards or 2 * n_workers)
        run = uuid.uuid4().hex[:12]
        futures = [client.submit(reduce_shard, a.calscope, data_dir, header, s, flags,
                                 f"{run}-{k}", key=f"calscope-reduce-{run}-{k}", pure=False)
                   for k, s in enumerate(shards)]
        print(f"dask_reduce: {len(rows)} cases in {len(shards)} shard{'s' * (len(shards) > 1)} "
              f"on {n_workers} worker{'s' * (n_workers > 1)}", file=sys.stderr)
        results = [None] * len(shards)
        index = {f.key: k for k, f in enumerate(futures)}
        for f in distributed.as_completed(futures):
            k = index[f.key]
            try:
                results[k] = f.result()
            except Exception as e:  # the task itself died (worker lost, cannot unpickle, ...)
                results[k] = {"rc": -1, "stderr": f"task failed: {e!r}", "data": None,
                              "host": "?", "absolute": False}
            r = results[k]
            first, last = shards[k][0][0], shards[k][-1][0]
            state = "done" if r["rc"] == 0 else f"FAILED (exit {r['rc']})"
            print(f"dask_reduce: shard {k + 1}/{len(shards)} ({first}..{last}) on {r['host']}: "
                  f"{state}", file=sys.stderr)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    bad = [k for k, r in enumerate(results) if r["rc"] != 0]
    for k in bad:
        r = results[k]
        first, last = shards[k][0][0], shards[k][-1][0]
        msg = r["stderr"].rstrip() or "(no message)"
        print(f"dask_reduce: shard {k + 1} (cases {first}..{last}) on {r['host']}: "
              f"{a.calscope} reduce exited with status {r['rc']}:\n"
              + "\n".join("  " + l for l in msg.splitlines()), file=sys.stderr)
    if bad:
        fail(f"{len(bad)} of {len(shards)} shards failed; nothing merged", 1)
    if any(r["absolute"] for r in results):
        print(f"dask_reduce: {data_dir} is not writable on a worker: its shards recorded "
              "absolute input paths", file=sys.stderr)

    tmp = tempfile.mkdtemp(prefix="calscope-dask-merge-")
    try:
        paths = []
        for k, r in enumerate(results):
            p = os.path.join(tmp, f"shard{k:04d}.stats")
            with open(p, "wb") as f:
                f.write(r["data"])
            paths.append(p)
        calscope = a.calscope if os.sep in a.calscope or shutil.which(a.calscope) else None
        if calscope is None:
            fail(f"{a.calscope}: not found here (the merge runs on this machine; --calscope)", 1)
        m = subprocess.run([calscope, "reduce", "--merge", "-o", a.out] + paths,
                           stderr=subprocess.PIPE, text=True)
        if m.returncode != 0:
            print(m.stderr.rstrip(), file=sys.stderr)
            fail(f"calscope reduce --merge exited with status {m.returncode}", 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
