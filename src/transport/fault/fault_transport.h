// A decorator that makes any Transport fail on purpose, deterministically
// (seeded generator, injected clock), so failover can be tested with real
// request flows. Injected failures are ordinary submit errors and completion
// errors: the code under test cannot tell them from real ones.
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>

#include "common/clock.h"
#include "transport/fault/fault_spec.h"
#include "transport/transport.h"

namespace tent {

class FaultInjectingTransport final : public Transport {
public:
    FaultInjectingTransport(std::unique_ptr<Transport> inner, FaultSpec spec, const Clock& clock);

    TransportKind kind() const override { return inner_->kind(); }
    const std::string& name() const override { return inner_->name(); }
    Status install() override;
    void uninstall() override;
    Status submit(const TransferRequest& request) override;
    std::size_t poll(std::vector<Completion>& out, std::size_t max) override;

    // Change the faults mid-run (a rail that dies after a while). Keeps the
    // submit count and the generator state.
    void set_spec(const FaultSpec& spec) { spec_ = spec; }
    const FaultSpec& spec() const { return spec_; }
    Transport& inner() { return *inner_; }

    std::uint64_t submits_seen() const { return submits_seen_; }
    std::uint64_t injected_submit_failures() const { return injected_submit_failures_; }
    std::uint64_t injected_completion_errors() const { return injected_completion_errors_; }
    // Completions received from the inner transport but not yet released.
    std::size_t held() const { return held_.size(); }

private:
    struct Held {
        TimePoint ready;
        Completion completion;
    };

    bool roll(double rate);  // true with probability rate
    void drain_inner();

    std::unique_ptr<Transport> inner_;
    FaultSpec spec_;
    const Clock& clock_;
    std::uint64_t rng_state_;
    std::uint64_t submits_seen_ = 0;
    std::uint64_t injected_submit_failures_ = 0;
    std::uint64_t injected_completion_errors_ = 0;
    std::unordered_map<std::uint64_t, TimePoint> submitted_at_;
    std::deque<Held> held_;
};

} // namespace tent
