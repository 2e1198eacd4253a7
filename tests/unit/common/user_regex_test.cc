#include "common/user_regex.h"

#include <gtest/gtest.h>

namespace onnxprobe {
namespace {

bool Matches(const std::string& pattern, const std::string& text) {
  auto re = CompileUserRegex(pattern, "--regex");
  return re.ok() && std::regex_search(text, *re);
}

TEST(UserRegex, CompilesWhatUsersWrite) {
  EXPECT_TRUE(Matches("^layer[0-9]{1,3}/.*_out$", "layer12/conv_out"));
  EXPECT_TRUE(Matches("(a)\\1", "aa"));
  EXPECT_TRUE(Matches("x{2}", "xx"));
  EXPECT_TRUE(Matches("[{9999999999}]", "{"));  // braces in a class are literal
  EXPECT_TRUE(Matches("\\{12345678901\\}", "{12345678901}"));
  EXPECT_TRUE(Matches("block_12345678901", "block_12345678901"));
  EXPECT_FALSE(Matches("^conv$", "conv2"));
}

TEST(UserRegex, RefusesNumbersStdRegexWouldOverflowOn) {
  // found by fuzz_cli_specs: libstdc++ multiplies this back-reference number in a signed long
  auto br = CompileUserRegex("\\2222222222222222222s", "--regex");
  ASSERT_FALSE(br.ok());
  EXPECT_NE(br.status().message().find("back-reference"), std::string::npos);
  EXPECT_NE(br.status().message().find("--regex"), std::string::npos);
  EXPECT_FALSE(CompileUserRegex("a{99999999999999999999}", "tolerance pattern").ok());
  EXPECT_FALSE(CompileUserRegex("a{1,99999999999999999999}", "tolerance pattern").ok());
  EXPECT_FALSE(CompileUserRegex("a{100001}", "tolerance pattern").ok());
  EXPECT_FALSE(CompileUserRegex("(a)\\100", "--regex").ok());
}

TEST(UserRegex, ReportsMalformedPatterns) {
  auto bad = CompileUserRegex("conv(", "tolerance pattern");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'conv('"), std::string::npos);
}

}  // namespace
}  // namespace onnxprobe
