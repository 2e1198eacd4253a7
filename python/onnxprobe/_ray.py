"""A comparison over samples run as Ray tasks, one shard each, merged into the report one process
would write (docs/shard.md)."""
import os

from ._errors import Error, InvalidArgument, Unsupported
from ._samples import merge


def _one_shard(a, b, index, count, keywords):
    import onnxprobe  # in the worker: the package this task was sent from, in process

    return onnxprobe.compare(a, b, shard=(index, count), **keywords).json()


def _sample_count(keywords):
    """Samples the comparison would run (the library lists them as compare does)."""
    from . import _onnxprobe
    folder = keywords.get("inputs_dir")
    return _onnxprobe.count_samples("" if folder is None else os.fspath(folder), int(keywords.get("samples") or 0))


def compare_on_ray(a, b=None, *, shards=None, num_cpus=1, on_shard=None, json=None, **keywords):
    """Runs ``onnxprobe.compare(a, b, inputs_dir=... or samples=N, ...)`` as `shards` Ray tasks
    (``shard=(I, shards)`` each, `num_cpus` CPUs per task) on the cluster ``ray.init()`` connected
    to (a local one when none is), and returns their MergedReport: equal to the single-process
    report (timings aside). Paths must be readable where the tasks run (a shared file system).
    `shards` defaults to the cluster's CPUs over `num_cpus`; `on_shard(done, total)` is called as
    shards finish; `json`: the merged report is also written there. Set ``intra_threads`` (e.g.
    to `num_cpus`) so that tasks sharing a machine do not oversubscribe its cores."""
    try:
        import ray
    except ImportError:
        raise Unsupported("compare_on_ray needs Ray (pip install ray)") from None
    if keywords.get("inputs_dir") is None and keywords.get("samples") is None:
        raise InvalidArgument("compare_on_ray splits samples: give inputs_dir or samples")
    if "shard" in keywords:
        raise InvalidArgument("compare_on_ray chooses the shards itself (shards=N), not shard=")
    if not ray.is_initialized():
        ray.init(log_to_driver=False)
    if shards is None:  # one per CPU slot, never more than there are samples
        shards = max(1, int(ray.cluster_resources().get("CPU", 1) // max(num_cpus, 1)))
        shards = min(shards, _sample_count(keywords))
    shards = int(shards)
    if shards < 1:
        raise InvalidArgument(f"shards must be at least 1, not {shards}")
    task = ray.remote(num_cpus=num_cpus)(_one_shard)
    pending = [task.remote(a, b, i, shards, keywords) for i in range(shards)]
    order = {ref: i for i, ref in enumerate(pending)}
    texts = [None] * shards
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    texts[order[ref]] = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = getattr(e, "cause", None)
                    if isinstance(cause, Error):  # the task's one-line error, naming its shard
                        raise type(cause)(f"shard {order[ref]}/{shards}: {cause}") from None
                    raise
            if on_shard is not None:
                on_shard(shards - len(pending), shards)
    finally:
        for ref in pending:  # a failure or Ctrl-C: the other shards stop too
            ray.cancel(ref)
    return merge(texts, json=json)
