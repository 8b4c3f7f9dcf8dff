#include "core/train/branch_rules.h"

#include <map>
#include <set>

#include "core/config/json_reader.h"

namespace descentlab::train {
namespace {

void flatten(const nlohmann::json& value, const std::string& prefix, std::map<std::string, std::string>& into) {
  if (value.is_object()) {
    for (const auto& [key, inner] : value.items()) flatten(inner, prefix.empty() ? key : prefix + "." + key, into);
    return;
  }
  into[prefix] = value.is_string() ? value.get<std::string>() : value.dump();
}

// Why a setting cannot change mid-run ("" when it can).
std::string why_fixed(const std::string& key) {
  static const std::set<std::string> changeable = {
      "name",
      "train.epochs",
      "train.lr",
      "train.lr_schedule",
      "train.warmup",
      "train.grad_clip",
      "train.metric_interval",
      "train.histogram_interval",
      "train.device",
      "constraints.enabled",
      "constraints.alpha",
      "constraints.alpha_schedule",
      "constraints.alpha_final",
      "constraints.dual_lr",
      "constraints.dual_update",
      "constraints.dual_warmup_epochs",
      "constraints.stop_gradient",
      "constraints.resilient",
      "constraints.resilient_cost",
      "constraints.resilient_lr",
  };
  if (changeable.count(key)) return "";
  const auto starts = [&](const char* prefix) { return key.rfind(prefix, 0) == 0; };
  if (starts("model.") || starts("task")) return "the model continued is the parent's";
  if (starts("data.")) return "the data order continued is the parent's, over its data";
  if (key == "train.seed") return "the random generators continued are the parent's";
  if (key == "train.batch_size") return "the data order continued is the parent's, in its batches";
  if (starts("optimizer.")) {
    return "the optimizer's state and options continued are the parent's (a switch of optimizer mid-run is not "
           "offered yet)";
  }
  if (starts("sparsity.")) return "the pruning schedule's state continued is the parent's";
  return "it is not among the settings a branch may change (docs/cli.md, train --branch)";
}

}  // namespace

std::string branch_changes(const nlohmann::json& parent, const nlohmann::json& child, const std::string& source) {
  std::map<std::string, std::string> before, after;
  flatten(parent, "", before);
  flatten(child, "", after);
  std::set<std::string> keys;
  for (const auto& entry : before) keys.insert(entry.first);
  for (const auto& entry : after) keys.insert(entry.first);
  std::string changes;
  for (const auto& key : keys) {
    const auto was = before.find(key), is = after.find(key);
    const std::string from = was == before.end() ? "(unset)" : was->second;
    const std::string to = is == after.end() ? "(unset)" : is->second;
    if (from == to) continue;
    const std::string why = why_fixed(key);
    if (!why.empty()) {
      throw config::ConfigError(source, key, "cannot change in a branch (" + from + " -> " + to + "): " + why);
    }
    changes += (changes.empty() ? "" : "; ") + key + " " + from + " -> " + to;
  }
  return changes;
}

}  // namespace descentlab::train
