#pragma once
// What a branch may change (issue 55): a child run continues its parent's checkpoint exactly (weights, optimizer
// state, lambda, data order, random generators) under a configuration that differs only in settings that can change
// mid-run. This first set is the settings the trainer reads afresh at every step or epoch: the learning rate and its
// schedule, the epochs, clipping and the recording intervals, and every setting of the constraints' primal-dual
// updates (alpha and its schedule, the dual step, the resilient and stop-gradient options, the constraints on or off).
// The device may change too. Everything else is fixed by the state being continued (the model, the data, the seed)
// or stored in it with the parent's values (the optimizer and its options, the sparsity schedule): refused, named.

#include <string>

#include <nlohmann/json.hpp>

namespace descentlab::train {

// The settings `child` changes from `parent` (both full configuration documents), in key order, as
// "constraints.alpha 0.4 -> 0.1; train.epochs 2 -> 4" ("" for none). Throws config::ConfigError naming the first
// setting that cannot change mid-run, with why.
std::string branch_changes(const nlohmann::json& parent, const nlohmann::json& child, const std::string& source);

}  // namespace descentlab::train
