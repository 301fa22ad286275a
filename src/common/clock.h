// The clock every decision function is given, so that tests can drive time
// by hand instead of sleeping.
#pragma once

#include <chrono>

namespace tent {

using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

class Clock {
public:
    virtual ~Clock() = default;
    virtual TimePoint now() const = 0;
};

class SteadyClock final : public Clock {
public:
    TimePoint now() const override {
        return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
    }
    // Never destroyed: an engine's progress thread may still read it while
    // a program that did not destroy its engine runs its static destructors
    // at exit (UBSan saw the call through a destroyed clock).
    static const SteadyClock& instance() {
        static const SteadyClock* clock = new SteadyClock;
        return *clock;
    }
};

// A clock that moves only when a test tells it to.
class ManualClock final : public Clock {
public:
    explicit ManualClock(TimePoint start = TimePoint(std::chrono::hours(1))) : now_(start) {}
    TimePoint now() const override { return now_; }
    void advance(Duration d) { now_ += d; }
    void set(TimePoint t) { now_ = t; }

private:
    TimePoint now_;
};

} // namespace tent
