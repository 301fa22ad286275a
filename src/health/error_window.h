// A true sliding window of error timestamps: an error counts for exactly
// rail_error_window_secs after it happened, however the others are spread,
// so errors spread wider than the window can never add up to a pause (as
// they can with a counter that is only reset now and then).
#pragma once

#include <cstddef>
#include <deque>

#include "common/clock.h"

namespace tent {

class ErrorWindow {
public:
    // threshold: errors inside the window that mean "pause"; also the most
    // timestamps ever kept, since older ones cannot change the answer.
    ErrorWindow(Duration window, std::size_t threshold);

    // Records an error at `now` (times must not go backwards). Returns true
    // when the window now holds `threshold` errors.
    bool add(TimePoint now);
    // Errors inside (now - window, now].
    std::size_t count(TimePoint now) const;
    void clear() { stamps_.clear(); }

private:
    void expire(TimePoint now);

    Duration window_;
    std::size_t threshold_;
    std::deque<TimePoint> stamps_;
};

} // namespace tent
