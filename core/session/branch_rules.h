#pragma once
// What a branch may change (issue 55): a child run continues its parent's checkpoint exactly (weights, optimizer
// state, lambda, data order, random generators) under a configuration that differs only in settings that can change
// mid-run. This first set is the settings the trainer reads afresh at every step or epoch: the learning rate and its
// schedule, the epochs, clipping and the recording intervals, and every setting of the constraints' primal-dual
// updates (alpha and its schedule, the dual step, the resilient and stop-gradient options, the constraints on or off).
// The device may change too; so may the optimizer (AdamW, HAM and HORST keep the same state, AdamW's, so a switch
// carries it all over), its mirror options and weight decay, and the AC/DC sparsity settings (the child's schedule
// takes over at the branch step). Everything else is fixed by the state being continued (the model, the data, the
// seed, the batch size, the tensors pruned): refused, named.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace descentlab::session {

// Why the setting `key` ("model.width") cannot change mid-run, "" when it can.
std::string why_fixed_in_branch(const std::string& key);

// The settings `child` changes from `parent` (both full configuration documents), in key order, as
// "constraints.alpha 0.4 -> 0.1; train.epochs 2 -> 4" ("" for none). Throws config::ConfigError naming the first
// setting that cannot change mid-run, with why.
std::string branch_changes(const nlohmann::json& parent, const nlohmann::json& child, const std::string& source);

// What a person should know of how the child takes up `child`'s changes from `parent`'s state, one sentence each: an
// optimizer switch (which state carries over, and that none is reset: AdamW, HAM and HORST share AdamW's), mirror
// options that make the mirror step nothing, the sparsity schedule's hand-over. Empty when there is nothing to say.
std::vector<std::string> branch_notes(const nlohmann::json& parent, const nlohmann::json& child);

}  // namespace descentlab::session
