// The run filter's word on keys no run has (core/study/study.h: RunFilter::unknown_keys_text, nearest_keys): a
// filter on a misspelt key matches nothing, and says why and which keys come nearest.

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/study/study.h"

namespace descentlab::study {

std::string RunFilter::unknown_keys_text(const std::vector<RunEntry>& runs) const {
  std::set<std::string> known{kTagFilterKey};
  for (const auto& run : runs) {
    for (const auto& entry : run.config) known.insert(entry.first);
    for (const auto& entry : run.finals) known.insert(entry.first);
  }
  const std::vector<std::string> candidates(known.begin(), known.end());
  std::string text;
  std::set<std::string> said;
  for (const auto& term : terms_) {
    if (term.key.empty() || known.count(term.key) || !said.insert(term.key).second) continue;
    std::string nearest;
    for (const auto& key : nearest_keys(term.key, candidates)) nearest += (nearest.empty() ? "" : ", ") + key;
    text += (text.empty() ? "" : "; ") + std::string("no run has the key \"") + term.key + "\"" +
            (nearest.empty() ? "" : " (nearest: " + nearest + ")");
  }
  return text;
}

std::vector<std::string> nearest_keys(const std::string& key, const std::vector<std::string>& candidates,
                                      size_t count) {
  // Levenshtein distance, any case; a key without a dot ("lr") is also measured against each candidate's last part
  // ("train.lr").
  const auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t above = row[j];
        const bool same =
            std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  const auto last_part = [](const std::string& text) { return text.substr(text.rfind('.') + 1); };
  std::vector<std::pair<size_t, size_t>> ranked;  // (distance, index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    size_t d = distance(key, candidates[i]);
    if (key.find('.') == std::string::npos) d = std::min(d, distance(key, last_part(candidates[i])) + 1);
    ranked.emplace_back(d, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> nearest;
  for (size_t i = 0; i < ranked.size() && nearest.size() < count; ++i) nearest.push_back(candidates[ranked[i].second]);
  return nearest;
}

}  // namespace descentlab::study
