// ConciseProviderMessage (provider_error.h).
#include "backend/ort/provider_error.h"

#include <cctype>

namespace onnxprobe {
namespace {

bool IsPathChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '.' ||
         c == '-' || c == '+';
}

// Erases "<lead><path>:<digits>:" (and the spaces after it) wherever it occurs, where <lead>
// is followed by text up to `between` when `between` is not empty ("Check '...' failed at ").
void EraseFrames(std::string* s, const std::string& lead, const std::string& between) {
  size_t from = 0;
  while ((from = s->find(lead, from)) != std::string::npos) {
    size_t p = from + lead.size();
    if (!between.empty()) {
      size_t b = s->find(between, p);
      if (b == std::string::npos) return;
      p = b + between.size();
    }
    size_t path = p;
    while (p < s->size() && IsPathChar((*s)[p])) ++p;
    // the path ends in ":<line>"; IsPathChar stopped at ':'
    if (p == path || p >= s->size() || (*s)[p] != ':') {
      from += lead.size();
      continue;
    }
    size_t line = ++p;
    while (p < s->size() && std::isdigit(static_cast<unsigned char>((*s)[p]))) ++p;
    if (p == line || p >= s->size() || (*s)[p] != ':') {
      from += lead.size();
      continue;
    }
    ++p;
    while (p < s->size() && (*s)[p] == ' ') ++p;
    s->erase(from, p - from);
  }
}

}  // namespace

std::string ConciseProviderMessage(const std::string& message) {
  static const std::string kMarker = "[OpenVINO-EP] ";
  size_t marker = message.rfind(kMarker);
  if (marker == std::string::npos) return message;
  // what comes before the first frame: "Exception during initialization: /onnxruntime/..."
  size_t frame = message.find(" /onnxruntime/");
  std::string head = message.substr(0, frame == std::string::npos ? 0 : frame);
  while (!head.empty() && (head.back() == ' ' || head.back() == ':')) head.pop_back();
  std::string body = message.substr(marker + kMarker.size());
  EraseFrames(&body, "Exception from ", "");
  EraseFrames(&body, "Check '", "' failed at ");
  std::string out = head.empty() ? "OpenVINO: " : head + ": OpenVINO: ";
  bool space = false;
  for (char c : body) {
    bool ws = std::isspace(static_cast<unsigned char>(c));
    if (ws) {
      space = true;
      continue;
    }
    if (space && out.back() != ' ') out += ' ';
    space = false;
    out += c;
  }
  return out;
}

bool ProviderFailedOnItsOwnNodes(const std::string& message) {
  return message.find("[OpenVINO-EP] Exception while Loading Network") != std::string::npos ||
         message.find("[OpenVINO-EP] Exception while Reading network") != std::string::npos;
}

}  // namespace onnxprobe
