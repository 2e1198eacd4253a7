// The messages between an isolated side and its worker: framing with a descriptor, tensors
// through shared memory, and region reuse that never overwrites a tensor still held.
#include "side/wire.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace onnxprobe::wire {
namespace {

Tensor Filled(DType dtype, Shape shape, uint8_t seed) {
  auto t = Tensor::Allocate(dtype, std::move(shape));
  EXPECT_TRUE(t.ok());
  auto* p = static_cast<uint8_t*>(t->data());
  for (uint64_t i = 0; i < t->byte_size(); ++i) p[i] = static_cast<uint8_t>(seed + i * 7);
  return std::move(*t);
}

struct Pipe {
  Pipe() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0); }
  ~Pipe() {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
  }
  int fds[2] = {-1, -1};
};

// Sends `items` from `pool` over a socket and unpacks them on the other end.
Expected<std::vector<RunOutput>> Transfer(const std::vector<RunOutput>& outputs, RegionPool* pool,
                                          RegionMap* map) {
  std::vector<TensorItem> items;
  for (const auto& o : outputs) items.push_back({&o.name, &o.tensor, &o.skipped});
  OP_ASSIGN_OR_RETURN(SharedRegion * region, pool->Take(PackedSize(items)));
  Writer w;
  OP_ASSIGN_OR_RETURN(int fd, PackTensors(items, region, &w));
  Pipe p;
  OP_RETURN_IF_ERROR(Send(p.fds[0], MsgType::kReply, w.bytes(), fd));
  OP_ASSIGN_OR_RETURN(Message m, Receive(p.fds[1]));
  EXPECT_EQ(m.type, MsgType::kReply);
  Reader r(m.payload);
  auto out = map->Unpack(&r, std::move(m.fd), Reuse::kPooled);
  EXPECT_TRUE(r.done());
  return out;
}

TEST(Wire, TensorsOfEveryKindArriveBitForBit) {
  std::vector<RunOutput> sent;
  sent.push_back({"f32", Filled(DType::kFloat32, {2, 3, 5}, 1), {}});
  sent.push_back({"i64", Filled(DType::kInt64, {7}, 2), {}});
  sent.push_back({"f16 scalar", Filled(DType::kFloat16, {}, 3), {}});
  sent.push_back({"bool", Filled(DType::kBool, {3, 1}, 4), {}});
  sent.push_back({"empty", Filled(DType::kFloat32, {4, 0}, 5), {}});
  sent.push_back(
      {"seq", Tensor(), {SkipKind::kNotATensor, "not a tensor (sequence, map or optional value)"}});
  RegionPool pool;
  RegionMap map;
  auto got = Transfer(sent, &pool, &map);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ((*got)[i].name, sent[i].name);
    EXPECT_EQ((*got)[i].skipped.kind, sent[i].skipped.kind);
    EXPECT_EQ((*got)[i].skipped.detail, sent[i].skipped.detail);
    EXPECT_EQ((*got)[i].tensor.empty(), sent[i].tensor.empty());
    if (!sent[i].tensor.empty()) {
      EXPECT_TRUE((*got)[i].tensor.BitwiseEqual(sent[i].tensor)) << sent[i].name;
      EXPECT_EQ(reinterpret_cast<uintptr_t>((*got)[i].tensor.data()) % 64, 0u);
    }
  }
}

TEST(Wire, ARegionIsReusedOnlyAfterEveryTensorInItIsReleased) {
  RegionPool pool;
  RegionMap map;
  std::vector<RunOutput> a = {{"x", Filled(DType::kFloat32, {1000}, 10), {}}};
  std::vector<RunOutput> b = {{"x", Filled(DType::kFloat32, {1000}, 20), {}}};
  auto got_a = Transfer(a, &pool, &map);
  ASSERT_TRUE(got_a.ok());
  pool.Released(map.TakeReleased());  // nothing released yet
  auto got_b = Transfer(b, &pool, &map);
  ASSERT_TRUE(got_b.ok());
  EXPECT_NE((*got_a)[0].tensor.data(), (*got_b)[0].tensor.data());
  EXPECT_TRUE((*got_a)[0].tensor.BitwiseEqual(a[0].tensor));  // not overwritten by b
  const void* place_a = (*got_a)[0].tensor.data();
  got_a->clear();  // the receiver is done with a: its region may serve again
  std::vector<uint64_t> released = map.TakeReleased();
  EXPECT_EQ(released.size(), 1u);
  pool.Released(released);
  auto got_c = Transfer(a, &pool, &map);
  ASSERT_TRUE(got_c.ok());
  EXPECT_EQ((*got_c)[0].tensor.data(), place_a);  // same pages, no new mapping
  EXPECT_TRUE((*got_b)[0].tensor.BitwiseEqual(b[0].tensor));
  EXPECT_TRUE((*got_c)[0].tensor.BitwiseEqual(a[0].tensor));
}

TEST(Wire, MalformedPayloadsAreRejected) {
  Writer w;
  w.U64(1);
  w.U64(0);
  w.U64(3);  // three tensors announced, none there
  Reader r(w.bytes());
  RegionMap map;
  auto got = map.Unpack(&r, UniqueFd(), Reuse::kOnce);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kCorrupt);

  Writer s;
  s.Str("abc");
  std::string cut = s.bytes().substr(0, s.bytes().size() - 1);
  Reader rs(cut);
  EXPECT_EQ(rs.Str(), "");
  EXPECT_FALSE(rs.ok());
  EXPECT_EQ(rs.Finish("test").code(), ErrorCode::kCorrupt);

  // a tensor placed outside the region it names
  std::vector<RunOutput> one = {{"x", Filled(DType::kFloat32, {4}, 1), {}}};
  std::vector<TensorItem> items = {{&one[0].name, &one[0].tensor, &one[0].skipped}};
  SharedRegion region;
  Writer ok;
  auto fd = PackTensors(items, &region, &ok);
  ASSERT_TRUE(fd.ok());
  std::string bad = ok.bytes();
  uint64_t far = 1 << 20;
  std::memcpy(&bad[bad.size() - sizeof far], &far, sizeof far);  // the offset is last
  Reader rb(bad);
  auto got_bad = map.Unpack(&rb, UniqueFd(dup(*fd)), Reuse::kOnce);
  ASSERT_FALSE(got_bad.ok());
  EXPECT_NE(got_bad.status().message().find("outside the shared memory"), std::string::npos);
}

TEST(Wire, APeerThatIsGoneIsReportedNotRaised) {
  Pipe p;
  close(p.fds[1]);
  p.fds[1] = -1;
  bool gone = false;
  Status st = Send(p.fds[0], MsgType::kFetch, std::string(1 << 20, 'x'), -1, &gone);
  EXPECT_FALSE(st.ok());  // and no SIGPIPE killed this test
  EXPECT_TRUE(gone);
  auto m = Receive(p.fds[0]);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->type, MsgType::kClosed);
}

}  // namespace
}  // namespace onnxprobe::wire
