// NumPy .npy and .npz files: read and write, the formats numpy itself reads and writes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

struct NpyHeader {
  DType dtype = DType::kFloat32;
  Shape shape;
  bool fortran_order = false;
  bool byteswap = false;     // big-endian data on this little-endian host
  uint64_t data_offset = 0;  // bytes from the start of the file to the array data
};

// Parses a .npy header (format versions 1, 2, 3). `what` names the source in error messages.
// Rejects object arrays, unknown dtypes, negative or overflowing shapes before any allocation.
Expected<NpyHeader> ParseNpyHeader(const void* data, uint64_t size, const std::string& what);

// Parses a whole .npy image. Fortran-order arrays are converted to C order; big-endian swapped.
// bfloat16 has no numpy dtype: it is written as float32 (exact) and read back as float32.
Expected<Tensor> ParseNpy(const void* data, uint64_t size, const std::string& what);
Expected<Tensor> ReadNpy(const std::string& path);

// The bytes of a .npy header for `t` (version 1.0, or 2.0 when the header needs it).
std::string NpyHeaderBytes(DType dtype, const Shape& shape);
// Writes `t` atomically (temporary name, then rename).
Status WriteNpy(const std::string& path, const Tensor& t);

// Reads every array of an .npz (zip, stored or deflated, zip64 aware). Keys lose ".npy";
// entries that are not .npy arrays are skipped.
Expected<std::vector<std::pair<std::string, Tensor>>> ReadNpz(const std::string& path);
// Names of the arrays in an .npz, without reading their data.
Expected<std::vector<std::string>> ListNpz(const std::string& path);

// Random access to the entries of an .npz (the file is memory-mapped, nothing read up front).
class NpzReader {
 public:
  static Expected<std::unique_ptr<NpzReader>> Open(const std::string& path);
  ~NpzReader();
  // Array keys (entry names without ".npy"), in archive order.
  const std::vector<std::string>& keys() const { return keys_; }
  Expected<Tensor> Read(const std::string& key) const;
  // The bytes of a non-array entry (e.g. "manifest.json"); kNotFound when absent.
  Expected<std::string> ReadRaw(const std::string& entry_name) const;

 private:
  NpzReader() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> keys_;
};

// Streams arrays into an .npz (stored, zip64 where needed). The file appears only on Finish();
// if the writer is destroyed before, the temporary file is removed.
class NpzWriter {
 public:
  NpzWriter();
  ~NpzWriter();
  NpzWriter(const NpzWriter&) = delete;
  NpzWriter& operator=(const NpzWriter&) = delete;

  Status Open(const std::string& path);
  Status Add(const std::string& name, const Tensor& t);
  // A non-array entry stored verbatim (numpy's NpzFile returns it as bytes).
  Status AddRaw(const std::string& entry_name, const std::string& bytes);
  Status Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onnxprobe
