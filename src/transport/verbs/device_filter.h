// Which of the host's HCAs the engine opens: the verbs_devices knob, a
// comma-separated list of device names (empty: every HCA), like
// NCCL_IB_HCA or UCX_NET_DEVICES. A name the host does not have is an
// error rather than silently ignored: a typo would otherwise leave a rail
// out unnoticed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tent {

// The devices of present (in the host's order) that wanted names; every
// device when wanted is empty or blank. Blanks around names are ignored.
// InvalidArgument for an empty entry, a name given twice, or a name that is
// not in present (the message lists what the host has).
Result<std::vector<std::string>> select_devices(const std::vector<std::string>& present, std::string_view wanted);

} // namespace tent
