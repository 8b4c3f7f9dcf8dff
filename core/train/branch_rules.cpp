#include "core/session/branch_rules.h"

#include <map>
#include <set>

#include "core/config/json_reader.h"

namespace descentlab::session {
namespace {

void flatten(const nlohmann::json& value, const std::string& prefix, std::map<std::string, std::string>& into) {
  if (value.is_object()) {
    for (const auto& [key, inner] : value.items()) flatten(inner, prefix.empty() ? key : prefix + "." + key, into);
    return;
  }
  into[prefix] = value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::string why_fixed_in_branch(const std::string& key) {
  static const std::set<std::string> changeable = {
      "name",
      "train.epochs",
      "train.lr",
      "train.lr_schedule",
      "train.warmup",
      "train.grad_clip",
      "train.metric_interval",
      "train.histogram_interval",
      "train.keep_interval",
      "train.keep_count",
      "train.keep_megabytes",
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
      "train.weight_decay",
      "optimizer.name",
      "optimizer.alpha",
      "optimizer.beta",
      "optimizer.exponent_clamp",
      "optimizer.min_dim",
      "sparsity.method",
      "sparsity.target",
      "sparsity.scope",
      "sparsity.units",
      "sparsity.warmup",
      "sparsity.phase",
      "sparsity.alternate_until",
      "sparsity.decompressed_until",
      "sparsity.compression_samples",
      "sparsity.frontier_interval",
      "sparsity.frontier_sparsities",
      "sparsity.frontier_samples",
  };
  if (changeable.count(key)) return "";
  const auto starts = [&](const char* prefix) { return key.rfind(prefix, 0) == 0; };
  if (starts("model.") || starts("task")) return "the model continued is the parent's";
  if (starts("data.")) return "the data order continued is the parent's, over its data";
  if (key == "train.seed") return "the random generators continued are the parent's";
  if (key == "train.batch_size") return "the data order continued is the parent's, in its batches";
  if (key == "sparsity.exclude_embeddings_and_readout") return "the masks continued are over the parent's tensors";
  return "it is not among the settings a branch may change (docs/cli.md, train --branch)";
}

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
    const std::string why = why_fixed_in_branch(key);
    if (!why.empty()) {
      throw config::ConfigError(source, key, "cannot change in a branch (" + from + " -> " + to + "): " + why);
    }
    changes += (changes.empty() ? "" : "; ") + key + " " + from + " -> " + to;
  }
  return changes;
}

std::vector<std::string> branch_notes(const nlohmann::json& parent, const nlohmann::json& child) {
  std::vector<std::string> notes;
  const auto text = [](const nlohmann::json& document, const char* section, const char* key) {
    const auto found = document.find(section);
    if (found == document.end() || !found->is_object() || !found->contains(key)) return std::string();
    const auto& value = (*found)[key];
    return value.is_string() ? value.get<std::string>() : value.dump();
  };
  const std::string was = text(parent, "optimizer", "name"), is = text(child, "optimizer", "name");
  const bool mirrored = is == "horst" || is == "ham";
  if (was != is) {
    std::string note = "optimizer " + was + " -> " + is +
                       ": the moments and step counts carry over (AdamW, HAM and HORST keep the same state, "
                       "AdamW's); ";
    note += mirrored ? "from the branch on, each step adds " + is + "'s mirror step (alpha " +
                           text(child, "optimizer", "alpha") + ", beta " + text(child, "optimizer", "beta") + ")"
                     : "the mirror step stops at the branch";
    notes.push_back(note);
  }
  if (mirrored && text(child, "optimizer", "alpha") == "0.0" && text(child, "optimizer", "beta") == "0.0") {
    notes.push_back("optimizer.alpha and optimizer.beta are 0: " + is +
                    "'s mirror step does nothing and the child steps as AdamW (HORST's usual alpha is 5)");
  }
  const std::string method_was = text(parent, "sparsity", "method"), method = text(child, "sparsity", "method");
  if (method_was == "acdc" && method == "none") {
    notes.push_back(
        "AC/DC is off from the branch: a compressed parent's masks are let go and its pruned weights "
        "train again from zero");
  } else if (method == "acdc" &&
             parent.value("sparsity", nlohmann::json()) != child.value("sparsity", nlohmann::json())) {
    notes.push_back(
        "the AC/DC schedule is the child's, over the whole run: its phase at the branch step takes over at "
        "the child's first step, and a parent compressed there under another target or scope is "
        "compressed again at the child's");
  }
  return notes;
}

}  // namespace descentlab::session
