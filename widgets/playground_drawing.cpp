// The geometry playground's text wrapped at spaces (see playground_drawing.h).
#include "widgets/playground_drawing.h"

#include <algorithm>

namespace descentlab::widgets {

void textWrappedAtSpaces(const std::string& text) {
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  ImGui::BeginGroup();
  std::string line;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, end - at);
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
      ImGui::TextUnformatted(line.c_str());
      line = word;
    } else {
      line = longer;
    }
    at = end + 1;
  }
  if (!line.empty()) ImGui::TextUnformatted(line.c_str());
  ImGui::EndGroup();
}

}  // namespace descentlab::widgets
