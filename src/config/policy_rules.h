// Syntax of [policy NAME] sections: which keys exist and what their values
// may be. The policy layer gives the rules their meaning; here we only make
// sure that a rule it receives is well-formed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace tent {

// segment_type, priority, devices, transports, min_size, max_size,
// local_memory, remote_memory, same_machine.
const std::vector<std::string>& policy_rule_keys();
bool is_policy_rule_key(std::string_view key);

// A rule name: one word of letters, digits, '_', '-' and '.'.
bool is_valid_policy_name(std::string_view name);

// Checks one value and returns it normalised (keywords in lower case, lists
// without blanks); the error names the accepted values.
Result<std::string> check_policy_value(const std::string& key, const std::string& value);

// Checks that need several keys of one rule (min_size <= max_size). Returns
// error messages without a location prefix.
std::vector<std::string> check_policy_rule(const PolicyRule& rule);

} // namespace tent
