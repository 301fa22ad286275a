// How long a rail stays paused, and how the memory of past pauses fades.
//
// The "pause level" counts recent pauses. The n-th pause in a row lasts
// base * 2^(n-1), capped. The level halves for every quiet period of one base
// cooldown without a pause, rather than resetting: a rail that flaps keeps a
// long cooldown, a rail that fails once a day starts again from the base.
// (The anchor doubled the cooldown on every *error*, so the first pause after
// a burst of three errors lasted 120 s instead of the documented 30 s.)
#pragma once

#include "common/clock.h"

namespace tent {

// Levels beyond this change nothing (2^15 * 1 s already exceeds any cap) and
// would only make the memory slower to fade.
inline constexpr unsigned kMaxPauseLevel = 16;

// Cooldown of a pause at `level` (1 = first pause): min(base * 2^(level-1), cap).
// Level 0 is treated as 1.
Duration cooldown_for_level(unsigned level, Duration base, Duration cap);

// The level after `quiet` time without a pause: halved once per full `base` period.
unsigned decay_pause_level(unsigned level, Duration quiet, Duration base);

} // namespace tent
