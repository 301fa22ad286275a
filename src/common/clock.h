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
    TimePoint now() const override { return t_turn_depth > 0 ? t_turn_now : read(); }

    // A reading now, also within a turn: for deadlines that a loop waits
    // for (a turn's reading would never pass them).
    static TimePoint fresh() { return read(); }

    // One reading for a short stretch of work on this thread that reads the
    // time at many steps: starting a request (QoS, planning, each piece's
    // posting time) or taking a rail's completions (latency, silence, the
    // request's end). A reading costs 30 ns or more on a virtual machine
    // (kvm-clock), and the engine took about ten per request: with one per
    // stretch, 64 B writes through two engines in one process took about a
    // quarter less CPU. Only for work that never waits: within it, time
    // stands still. Nested turns keep the outer reading.
    class Turn {
    public:
        Turn() {
            if (t_turn_depth++ == 0) t_turn_now = read();
        }
        ~Turn() { --t_turn_depth; }
        Turn(const Turn&) = delete;
        Turn& operator=(const Turn&) = delete;
    };
    // Never destroyed: an engine's progress thread may still read it while
    // a program that did not destroy its engine runs its static destructors
    // at exit (UBSan saw the call through a destroyed clock).
    static const SteadyClock& instance() {
        static const SteadyClock* clock = new SteadyClock;
        return *clock;
    }

private:
    static TimePoint read() { return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now()); }
    static inline thread_local int t_turn_depth = 0;
    static inline thread_local TimePoint t_turn_now{};
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
