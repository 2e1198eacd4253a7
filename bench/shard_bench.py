"""Throughput of a comparison over samples split into shards: one process (the baseline, measured
in the same run), shards as Ray tasks with 1 and with 2 workers (best of two each) (a local cluster, one CPU per task,
`intra_threads=1` everywhere so that tasks do not oversubscribe the cores), and the merged report
checked equal to the single process's (timings aside).

  bench/shard_bench.py PACKAGE_DIR MODEL SAMPLES
PACKAGE_DIR holds the onnxprobe package with its extension module (bench/run.sh assembles it);
run by a Python that has Ray (the bootstrap's ray wheels)."""
import os
import sys
import tempfile
import time

import numpy as np


def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in ("seconds", "resources", "merged", "shard")}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d


def main():
    package, model, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, package)
    os.environ["PYTHONPATH"] = package + os.pathsep + os.environ.get("PYTHONPATH", "")  # Ray's workers
    import onnxprobe
    import ray
    import onnx

    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    x = next(i for i in m.graph.input if i.name not in inits)
    shape = [d.dim_value if d.dim_value > 0 else 1 for d in x.type.tensor_type.shape.dim]
    folder = tempfile.mkdtemp(prefix="shard_bench_")
    rng = np.random.default_rng(0)
    for i in range(count):
        np.savez(os.path.join(folder, f"s{i:03d}.npz"), **{x.name: rng.standard_normal(shape).astype(np.float32)})
    kw = dict(inputs_dir=folder, b_opt_level="all", intra_threads=1, diagnose=False)
    t_single = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        single = onnxprobe.compare(model, **kw)
        t_single = min(t_single, time.perf_counter() - t)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.get([ray.remote(lambda: 0).remote() for _ in range(2)])  # workers started before timing
    rows = []
    for workers in (1, 2):
        best, same = float("inf"), True
        for _ in range(2):  # best of two: the first may start worker processes and load the runtime
            t = time.perf_counter()
            merged = onnxprobe.compare_on_ray(model, shards=workers, num_cpus=1, **kw)
            best = min(best, time.perf_counter() - t)
            same = same and strip(merged.to_dict()) == strip(single.to_dict())
        rows.append((workers, best, same))
    ray.shutdown()
    name = os.path.basename(model)
    print(f"{name}, {count} samples (optimizations disabled vs all), intra_threads=1:")
    print(f"  one process          {t_single:7.2f} s  {count / t_single:6.2f} samples/s")
    for workers, seconds, same in rows:
        print(f"  Ray, {workers} worker(s)     {seconds:7.2f} s  {count / seconds:6.2f} samples/s  "
              f"{t_single / seconds:4.2f}x one process; merged == one process: {'yes' if same else 'NO'}")
    print(f"  2 workers vs 1: {rows[0][1] / rows[1][1]:.2f}x")
    if not all(same for _, _, same in rows):
        sys.exit("the merged report differs from the single process's")


if __name__ == "__main__":
    main()
