// .npy parsing and writing. Format: magic "\x93NUMPY", version, header length, a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded to 64 bytes.
#include "onnxprobe/tensor/npy.h"

#include <cctype>
#include <cstring>

#include "common/file_util.h"

namespace onnxprobe {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct Descr {
  const char* code;  // without byte-order character
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"f4", DType::kFloat32}, {"f2", DType::kFloat16}, {"f8", DType::kFloat64},
    {"i1", DType::kInt8},    {"i2", DType::kInt16},   {"i4", DType::kInt32},
    {"i8", DType::kInt64},   {"u1", DType::kUInt8},   {"u2", DType::kUInt16},
    {"u4", DType::kUInt32},  {"u8", DType::kUInt64},  {"b1", DType::kBool}};

// Finds the value text following 'key': in the header dict.
bool FindValue(const std::string& h, const std::string& key, size_t* pos) {
  for (const char* q : {"'", "\""}) {
    std::string k = std::string(q) + key + q;
    size_t p = h.find(k);
    if (p == std::string::npos) continue;
    p = h.find(':', p + k.size());
    if (p == std::string::npos) return false;
    ++p;
    while (p < h.size() && std::isspace(static_cast<unsigned char>(h[p]))) ++p;
    *pos = p;
    return true;
  }
  return false;
}

Status ParseDescr(const std::string& h, const std::string& what, NpyHeader* out) {
  size_t p;
  if (!FindValue(h, "descr", &p)) return Corrupt(what + ": npy header has no 'descr'");
  if (p >= h.size() || (h[p] != '\'' && h[p] != '"')) {
    return Unsupported(what +
                       ": npy descr is not a simple dtype string (structured arrays are "
                       "not supported)");
  }
  char quote = h[p];
  size_t end = h.find(quote, p + 1);
  if (end == std::string::npos) return Corrupt(what + ": unterminated npy descr");
  std::string d = h.substr(p + 1, end - p - 1);
  if (d.size() != 3) return Unsupported(what + ": npy dtype '" + d + "' is not supported");
  char order = d[0];
  std::string code = d.substr(1);
  for (const auto& e : kDescrs) {
    if (code != e.code) continue;
    size_t width = DTypeSize(e.dtype);
    if (order == '>' && width > 1) {
      out->byteswap = true;
    } else if (order != '<' && order != '|' && order != '=' && !(order == '>' && width == 1)) {
      return Corrupt(what + ": npy dtype '" + d + "' has an unknown byte order");
    }
    out->dtype = e.dtype;
    return Status::Ok();
  }
  return Unsupported(what + ": npy dtype '" + d +
                     "' is not supported (object, string, complex "
                     "and datetime arrays cannot be compared)");
}

Status ParseFortran(const std::string& h, const std::string& what, NpyHeader* out) {
  size_t p;
  if (!FindValue(h, "fortran_order", &p))
    return Corrupt(what + ": npy header has no 'fortran_order'");
  if (h.compare(p, 4, "True") == 0) {
    out->fortran_order = true;
  } else if (h.compare(p, 5, "False") == 0) {
    out->fortran_order = false;
  } else {
    return Corrupt(what + ": npy fortran_order is neither True nor False");
  }
  return Status::Ok();
}

Status ParseShape(const std::string& h, const std::string& what, NpyHeader* out) {
  size_t p;
  if (!FindValue(h, "shape", &p) || p >= h.size() || h[p] != '(') {
    return Corrupt(what + ": npy header has no 'shape' tuple");
  }
  size_t end = h.find(')', p);
  if (end == std::string::npos) return Corrupt(what + ": unterminated npy shape tuple");
  Shape shape;
  size_t i = p + 1;
  while (i < end) {
    while (i < end && (std::isspace(static_cast<unsigned char>(h[i])) || h[i] == ',')) ++i;
    if (i >= end) break;
    if (h[i] == '-') return InvalidArgument(what + ": npy shape has a negative dimension");
    if (!std::isdigit(static_cast<unsigned char>(h[i]))) {
      return Corrupt(what + ": npy shape has a non-integer dimension");
    }
    uint64_t v = 0;
    while (i < end && std::isdigit(static_cast<unsigned char>(h[i]))) {
      v = v * 10 + uint64_t(h[i] - '0');
      if (v > uint64_t(INT64_MAX)) return InvalidArgument(what + ": npy dimension overflows int64");
      ++i;
    }
    if (i < end && h[i] == 'L') ++i;  // Python 2 long suffix
    shape.push_back(static_cast<int64_t>(v));
    if (shape.size() > 64) return Corrupt(what + ": npy shape has more than 64 dimensions");
  }
  Status st = NumBytes(out->dtype, shape).status();
  if (!st.ok()) return st.WithContext(what);
  out->shape = std::move(shape);
  return Status::Ok();
}

void SwapBytes(uint8_t* p, uint64_t n, size_t width) {
  for (uint64_t i = 0; i < n; ++i, p += width) {
    for (size_t a = 0, b = width - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
  }
}

// Converts column-major `src` into row-major `dst` of the same shape.
void FortranToC(const uint8_t* src, uint8_t* dst, const Shape& shape, size_t width) {
  size_t rank = shape.size();
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  if (n == 0) return;
  std::vector<uint64_t> fstride(rank), idx(rank, 0);
  uint64_t s = 1;
  for (size_t k = 0; k < rank; ++k) {
    fstride[k] = s;
    s *= uint64_t(shape[k]);
  }
  for (uint64_t c = 0; c < n; ++c) {
    uint64_t off = 0;
    for (size_t k = 0; k < rank; ++k) off += idx[k] * fstride[k];
    std::memcpy(dst + c * width, src + off * width, width);
    for (size_t k = rank; k-- > 0;) {  // increment the C-order multi-index
      if (++idx[k] < uint64_t(shape[k])) break;
      idx[k] = 0;
    }
  }
}

}  // namespace

Expected<NpyHeader> ParseNpyHeader(const void* data, uint64_t size, const std::string& what) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (size < 10 || std::memcmp(p, kMagic, 6) != 0) {
    return Corrupt(what + ": not a .npy file (missing \\x93NUMPY magic)");
  }
  uint8_t major = p[6];
  uint64_t header_len, start;
  if (major == 1) {
    header_len = uint64_t(p[8]) | (uint64_t(p[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return Corrupt(what + ": truncated .npy header");
    header_len =
        uint64_t(p[8]) | (uint64_t(p[9]) << 8) | (uint64_t(p[10]) << 16) | (uint64_t(p[11]) << 24);
    start = 12;
  } else {
    return Unsupported(what + ": .npy format version " + std::to_string(major) +
                       " is not supported");
  }
  if (start + header_len > size) {
    return Corrupt(what + ": .npy header length " + std::to_string(header_len) +
                   " runs past the end of the file");
  }
  std::string h(reinterpret_cast<const char*>(p + start), header_len);
  NpyHeader out;
  OP_RETURN_IF_ERROR(ParseDescr(h, what, &out));
  OP_RETURN_IF_ERROR(ParseFortran(h, what, &out));
  OP_RETURN_IF_ERROR(ParseShape(h, what, &out));
  out.data_offset = start + header_len;
  return out;
}

Expected<Tensor> ParseNpy(const void* data, uint64_t size, const std::string& what) {
  OP_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(data, size, what));
  OP_ASSIGN_OR_RETURN(uint64_t bytes, NumBytes(h.dtype, h.shape));
  uint64_t avail = size - h.data_offset;
  if (avail != bytes) {
    return Corrupt(what + ": .npy data is " + std::to_string(avail) + " bytes, expected " +
                   std::to_string(bytes) + " for " + DTypeName(h.dtype) + " " +
                   ShapeToString(h.shape));
  }
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(h.dtype, h.shape));
  const auto* src = static_cast<const uint8_t*>(data) + h.data_offset;
  auto* dst = t.data_as<uint8_t>();
  if (h.fortran_order && h.shape.size() > 1) {
    FortranToC(src, dst, h.shape, DTypeSize(h.dtype));
  } else if (bytes > 0) {
    std::memcpy(dst, src, bytes);
  }
  if (h.byteswap) SwapBytes(dst, t.num_elements(), DTypeSize(h.dtype));
  if (h.dtype == DType::kBool) {
    for (uint64_t i = 0; i < t.num_elements(); ++i) dst[i] = dst[i] ? 1 : 0;
  }
  return t;
}

Expected<Tensor> ReadNpy(const std::string& path) {
  OP_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseNpy(bytes.data(), bytes.size(), path);
}

std::string NpyHeaderBytes(DType dtype, const Shape& shape) {
  std::string descr;
  switch (dtype) {
    case DType::kBFloat16:
    case DType::kFloat32:
      descr = "<f4";
      break;
    case DType::kFloat16:
      descr = "<f2";
      break;
    case DType::kFloat64:
      descr = "<f8";
      break;
    case DType::kInt8:
      descr = "|i1";
      break;
    case DType::kInt16:
      descr = "<i2";
      break;
    case DType::kInt32:
      descr = "<i4";
      break;
    case DType::kInt64:
      descr = "<i8";
      break;
    case DType::kUInt8:
      descr = "|u1";
      break;
    case DType::kUInt16:
      descr = "<u2";
      break;
    case DType::kUInt32:
      descr = "<u4";
      break;
    case DType::kUInt64:
      descr = "<u8";
      break;
    case DType::kBool:
      descr = "|b1";
      break;
  }
  std::string dims;
  if (shape.size() == 1) {
    dims = std::to_string(shape[0]) + ",";
  } else {
    for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  }
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + ")";
  dict += ", }";
  size_t prefix = 10;
  bool v2 = false;
  size_t total = prefix + dict.size() + 1;
  if ((total + 63) / 64 * 64 - prefix > 65535) {
    v2 = true;
    prefix = 12;
    total = prefix + dict.size() + 1;
  }
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  uint64_t hl = dict.size();
  std::string out(kMagic, 6);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  out += static_cast<char>(hl & 0xff);
  out += static_cast<char>((hl >> 8) & 0xff);
  if (v2) {
    out += static_cast<char>((hl >> 16) & 0xff);
    out += static_cast<char>((hl >> 24) & 0xff);
  }
  return out + dict;
}

}  // namespace onnxprobe
