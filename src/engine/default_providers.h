// The transport providers an engine made from the configuration alone gets
// (the C API's tent_engine_create): every transport built into this library.
#pragma once

#include <memory>
#include <vector>

#include "config/config.h"
#include "transport/provider.h"

namespace tent {

Result<std::vector<std::unique_ptr<TransportProvider>>> make_default_providers(const Config& config);

} // namespace tent
