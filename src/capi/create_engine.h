// Shared by tent_engine_create() and tent_engine_create_with_overrides():
// loads the configuration described by options and builds the engine.
#pragma once

#include <string>

#include "config/config.h"
#include "tent/tent.h"

namespace tent::capi {

// Returns TENT_OK or a status; never throws. With error set, a bad
// configuration's text goes there instead of the log.
int create_engine(const LoadOptions& options, tent_engine_t** out, std::string* error);

} // namespace tent::capi
