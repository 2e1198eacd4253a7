"""Round trips against numpy and onnx themselves: they write, onnxprobe reads (and writes back),
they read and compare. The reference values are numpy's, never onnxprobe's."""
import numpy as np
import onnx
import pytest
from onnx import numpy_helper, helper, TensorProto

from conftest import run

DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def sample(dtype, shape=(2, 3, 4), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.floating):
        a = rng.standard_normal(shape).astype(dtype)
        flat = a.reshape(-1)
        if flat.size >= 3:
            flat[0], flat[1], flat[2] = np.nan, np.inf, -0.0
        return a
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_npy_numpy_writes_we_read_and_write(tmp_path, tensor_tool, dtype, version):
    a = sample(dtype)
    src, dst = tmp_path / "a.npy", tmp_path / "b.npy"
    with open(src, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    r = run([tensor_tool, src, dst])
    assert r.returncode == 0, r.stderr
    same(np.load(dst), a)


@pytest.mark.parametrize("shape", [(), (0,), (5,), (1, 1), (2, 0, 3), (3, 1, 2, 1, 2)])
def test_npy_shapes(tmp_path, tensor_tool, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    np.save(tmp_path / "a.npy", a)
    r = run([tensor_tool, tmp_path / "a.npy", tmp_path / "b.npy"])
    assert r.returncode == 0, r.stderr
    same(np.load(tmp_path / "b.npy"), a)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float64, np.uint64])
def test_npy_fortran_order_converted(tmp_path, tensor_tool, dtype):
    a = np.asfortranarray(sample(dtype, (3, 4, 5)))
    np.save(tmp_path / "f.npy", a)
    r = run([tensor_tool, tmp_path / "f.npy", tmp_path / "c.npy"])
    assert r.returncode == 0, r.stderr
    b = np.load(tmp_path / "c.npy")
    assert b.flags["C_CONTIGUOUS"]
    same(b, np.ascontiguousarray(a))


@pytest.mark.parametrize("dtype", [">f4", ">i8", ">f2", ">u2"])
def test_npy_big_endian_converted(tmp_path, tensor_tool, dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    np.save(tmp_path / "be.npy", a)
    r = run([tensor_tool, tmp_path / "be.npy", tmp_path / "le.npy"])
    assert r.returncode == 0, r.stderr
    same(np.load(tmp_path / "le.npy"), a.astype(a.dtype.newbyteorder("<")))


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_numpy_writes_we_read_and_write(tmp_path, tensor_tool, compressed):
    arrays = {f"t{i}_{np.dtype(d).name}": sample(d, seed=i) for i, d in enumerate(DTYPES)}
    arrays["/layer1/conv/Conv_output_0"] = sample(np.float32, (1, 2, 3))
    save = np.savez_compressed if compressed else np.savez
    save(tmp_path / "a.npz", **arrays)
    r = run([tensor_tool, tmp_path / "a.npz", tmp_path / "b.npz"])
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "b.npz") as z:
        assert sorted(z.files) == sorted(arrays)
        for k, v in arrays.items():
            same(z[k], v)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorproto_raw_data(tmp_path, tensor_tool, dtype):
    a = sample(dtype)
    (tmp_path / "a.pb").write_bytes(numpy_helper.from_array(a, "a").SerializeToString())
    r = run([tensor_tool, tmp_path / "a.pb", tmp_path / "b.npy"])
    assert r.returncode == 0, r.stderr
    same(np.load(tmp_path / "b.npy"), a)
    r = run([tensor_tool, tmp_path / "b.npy", tmp_path / "c.pb"])
    assert r.returncode == 0, r.stderr
    t = onnx.TensorProto()
    t.ParseFromString((tmp_path / "c.pb").read_bytes())
    same(numpy_helper.to_array(t), a)


@pytest.mark.parametrize("dtype,onnx_type", [
    (np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE), (np.int64, TensorProto.INT64),
    (np.int32, TensorProto.INT32), (np.int8, TensorProto.INT8), (np.uint8, TensorProto.UINT8),
    (np.int16, TensorProto.INT16), (np.uint16, TensorProto.UINT16), (np.uint32, TensorProto.UINT32),
    (np.uint64, TensorProto.UINT64), (np.bool_, TensorProto.BOOL), (np.float16, TensorProto.FLOAT16)])
def test_tensorproto_typed_fields(tmp_path, tensor_tool, dtype, onnx_type):
    a = sample(dtype, (2, 3))
    if dtype == np.float16:
        vals = a.view(np.uint16).reshape(-1).tolist()
        t = helper.make_tensor("a", onnx_type, a.shape, vals, raw=False)
        t.ClearField("int32_data")
        t.int32_data.extend(vals)
    else:
        t = helper.make_tensor("a", onnx_type, a.shape, a.reshape(-1).tolist(), raw=False)
    assert not t.HasField("raw_data")
    (tmp_path / "a.pb").write_bytes(t.SerializeToString())
    r = run([tensor_tool, tmp_path / "a.pb", tmp_path / "b.npy"])
    assert r.returncode == 0, r.stderr
    same(np.load(tmp_path / "b.npy"), a)


def test_bfloat16_written_as_exact_float32(tmp_path, tensor_tool):
    bits = np.array([0x3f80, 0xc000, 0x7f80, 0x0001, 0x3eaa], dtype=np.uint16)
    t = TensorProto(name="b", data_type=TensorProto.BFLOAT16, dims=[5], raw_data=bits.tobytes())
    (tmp_path / "b.pb").write_bytes(t.SerializeToString())
    r = run([tensor_tool, tmp_path / "b.pb", tmp_path / "b.npy"])
    assert r.returncode == 0, r.stderr
    expected = (bits.astype(np.uint32) << 16).view(np.float32)
    same(np.load(tmp_path / "b.npy"), expected)


def test_large_npz_roundtrip_zip64_offsets(tmp_path, tensor_tool):
    # numpy switches to zip64 records only past 4 GiB; many entries exercise the directory instead
    arrays = {f"a{i}": np.full((3,), i, dtype=np.int32) for i in range(300)}
    np.savez(tmp_path / "many.npz", **arrays)
    r = run([tensor_tool, tmp_path / "many.npz", tmp_path / "out.npz"])
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "out.npz") as z:
        assert len(z.files) == 300
        same(z["a299"], arrays["a299"])
