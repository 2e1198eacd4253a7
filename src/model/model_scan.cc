// ModelProto.graph (7) -> GraphProto.initializer (5) -> TensorProto.raw_data (9) are followed;
// every other field is copied through with its tag, so concatenated fragments parse to the same
// message protobuf would have built from the whole file.
#include "model/model_scan.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>

#include "onnxprobe/common/hash.h"

namespace onnxprobe {
namespace {

constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads the stream chunk by chunk; values may straddle chunks.
class Cursor {
 public:
  explicit Cursor(ChunkStream& stream) : stream_(stream) {}
  uint64_t pos() const { return pos_; }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!Fill()) return false;
      uint8_t b = *p_++;
      --left_;
      ++pos_;
      *v |= uint64_t(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  // Hands the next `n` bytes to fn(data, size), piece by piece.
  template <typename Fn>
  bool Take(uint64_t n, Fn&& fn) {
    while (n > 0) {
      if (!Fill()) return false;
      size_t k = static_cast<size_t>(std::min<uint64_t>(left_, n));
      fn(p_, k);
      p_ += k;
      left_ -= k;
      pos_ += k;
      n -= k;
    }
    return true;
  }

 private:
  bool Fill() {
    while (left_ == 0) {
      if (!stream_.Next(&p_, &left_)) return false;
    }
    return true;
  }

  ChunkStream& stream_;
  const uint8_t* p_ = nullptr;
  size_t left_ = 0;
  uint64_t pos_ = 0;
};

class Scanner {
 public:
  Scanner(ChunkStream& stream, ScanKeep keep, ModelScan* out)
      : c_(stream),
        keep_(keep != ScanKeep::kHashesOnly),
        hash_(keep != ScanKeep::kFieldsUnhashed),
        out_(out) {}

  bool Model(uint64_t end) {
    while (c_.pos() < end) {
      uint64_t tag, len;
      if (!c_.Varint(&tag)) return false;
      if (tag == (kModelGraph << 3 | kLengthDelimited)) {
        if (!Length(end, &len)) return false;
        out_->has_graph = true;
        if (!Graph(c_.pos() + len)) return false;
      } else if (!Copy(tag, end, &out_->model_fields)) {
        return false;
      }
    }
    return c_.pos() == end;
  }

 private:
  bool Graph(uint64_t end) {
    while (c_.pos() < end) {
      uint64_t tag, len;
      if (!c_.Varint(&tag)) return false;
      if (tag == (kGraphInitializer << 3 | kLengthDelimited)) {
        if (!Length(end, &len) || !Tensor(c_.pos() + len)) return false;
      } else if (!Copy(tag, end, &out_->graph_fields)) {
        return false;
      }
    }
    return c_.pos() == end;
  }

  bool Tensor(uint64_t end) {
    ScannedInitializer t;
    bool seen_raw = false;
    while (c_.pos() < end) {
      uint64_t tag, len;
      if (!c_.Varint(&tag)) return false;
      if (tag == (kTensorRawData << 3 | kLengthDelimited)) {
        // protobuf keeps the last of repeated raw_data; rare enough to leave to protobuf
        if (seen_raw) return false;
        seen_raw = true;
        if (!Length(end, &len)) return false;
        if (len > kKeptRawDataBytes) {
          t.raw_set_aside = true;
          t.raw_offset = c_.pos();
          t.raw_size = len;
          Sha256 h;
          if (!c_.Take(len, [&](const uint8_t* p, size_t n) {
                if (hash_) h.Update(p, n);
              }))
            return false;
          if (hash_) t.raw_sha256 = h.HexDigest();
          continue;
        }
        if (!CopyBody(tag, len, &t.fields)) return false;
      } else if (!Copy(tag, end, &t.fields)) {
        return false;
      }
    }
    out_->initializers.push_back(std::move(t));
    return c_.pos() == end;
  }

  // A length that fits inside the enclosing message.
  bool Length(uint64_t end, uint64_t* len) {
    return c_.Varint(len) && c_.pos() <= end && *len <= end - c_.pos();
  }

  // Copies one field whose tag was just read (into `out` when fields are kept).
  bool Copy(uint64_t tag, uint64_t end, std::string* out) {
    if ((tag >> 3) == 0) return false;
    uint64_t v;
    switch (static_cast<int>(tag & 7)) {
      case kVarint:
        if (!c_.Varint(&v) || c_.pos() > end) return false;
        if (keep_) {
          AppendVarint(out, tag);
          AppendVarint(out, v);
        }
        return true;
      case kFixed64:
      case kFixed32: {
        uint64_t n = (tag & 7) == kFixed64 ? 8 : 4;
        if (c_.pos() + n > end) return false;
        if (keep_) AppendVarint(out, tag);
        return Bytes(n, out);
      }
      case kLengthDelimited:
        return Length(end, &v) && CopyBody(tag, v, out);
      default:  // groups (deprecated, unused by ONNX) and invalid wire types
        return false;
    }
  }

  bool CopyBody(uint64_t tag, uint64_t len, std::string* out) {
    if (keep_) {
      AppendVarint(out, tag);
      AppendVarint(out, len);
    }
    return Bytes(len, out);
  }

  bool Bytes(uint64_t n, std::string* out) {
    if (!keep_) return c_.Take(n, [](const uint8_t*, size_t) {});
    return c_.Take(
        n, [&](const uint8_t* p, size_t k) { out->append(reinterpret_cast<const char*>(p), k); });
  }

  Cursor c_;
  bool keep_, hash_;
  ModelScan* out_;
};

bool ParseFragment(const std::string& bytes, google::protobuf::MessageLite* msg) {
  if (bytes.size() >= size_t(INT_MAX)) return false;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  return msg->MergeFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

}  // namespace

bool ScanModel(ChunkStream& stream, uint64_t size, ScanKeep keep, ModelScan* out) {
  return Scanner(stream, keep, out).Model(size);
}

bool AssembleModel(const ModelScan& scan, onnx::ModelProto* proto) {
  if (!ParseFragment(scan.model_fields, proto)) return false;
  if (!scan.has_graph) return true;
  onnx::GraphProto* g = proto->mutable_graph();
  if (!ParseFragment(scan.graph_fields, g)) return false;
  for (const auto& s : scan.initializers) {
    onnx::TensorProto* t = g->add_initializer();
    if (!ParseFragment(s.fields, t)) return false;
    if (s.raw_set_aside) t->set_raw_data(std::string(1, '\0'));
  }
  return true;
}

}  // namespace onnxprobe
