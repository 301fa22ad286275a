// What an ibv_wc_status means for the health layer: one switch, so every
// status a device can report has exactly one RailOutcome.
#pragma once

#include <infiniband/verbs.h>

#include "common/status.h"
#include "health/rail_outcome.h"

namespace tent {

RailOutcome rail_outcome_of(ibv_wc_status status);

// The Status code an operation's completion carries for an outcome
// (Rail scope for path failures, so the engine fails over).
Code status_code_of(RailOutcome outcome);

} // namespace tent
