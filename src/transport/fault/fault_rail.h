// FaultRail: a Rail decorator that injects faults (fault_params.h) into the
// rail it wraps -- posts that fail at submit, completions that report an
// error although the operation worked, completions held back by a delay.
// The engine wraps each new rail that the [fault] knobs select, verbs and TCP
// alike, and no rail when they are off. Everything else is the inner rail's.
// Health probes are never reported failed when they worked: a failed probe
// takes a rail out of use until it is re-armed, which would turn transient
// completion errors into a lost rail. Post failures do hit probes.
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "transport/fault/fault_decision.h"
#include "transport/fault/fault_params.h"
#include "transport/rail.h"

namespace tent {

class FaultRail final : public Rail {
public:
    FaultRail(std::unique_ptr<Rail> inner, const FaultParams& params, FaultState state, const Clock& clock);

    TransportKind kind() const override { return inner_->kind(); }
    const std::string& name() const override { return inner_->name(); }
    std::uint64_t max_op_length() const override { return inner_->max_op_length(); }
    std::uint64_t max_read_length() const override { return inner_->max_read_length(); }
    std::uint64_t max_send_length() const override { return inner_->max_send_length(); }

    Status post(const RailOp& op) override;
    void progress(std::vector<RailCompletion>& done,
                  const std::function<void(const RailMessage&)>& on_message) override;

    int wait_fd() const override { return inner_->wait_fd(); }
    void prepare_to_wait() override { inner_->prepare_to_wait(); }
    void begin_posts() override { inner_->begin_posts(); }
    void end_posts() override { inner_->end_posts(); }
    bool wants_write() const override { return inner_->wants_write(); }
    bool holds_answer() const override { return inner_->holds_answer(); }
    bool input_waiting() const override { return inner_->input_waiting(); }
    // The inner rail's timer, or the release of the first held completion.
    TimePoint next_timer() const override;
    bool broken() const override { return inner_->broken(); }
    Status fail() override { return inner_->fail(); }
    Status rearm() override { return inner_->rearm(); }
    bool rearmable() const override { return inner_->rearmable(); }
    bool lossy() const override { return inner_->lossy(); }
    bool atomics_deduplicated() const override { return inner_->atomics_deduplicated(); }

private:
    struct Held {
        TimePoint release;
        RailCompletion completion;
    };

    std::unique_ptr<Rail> inner_;
    FaultParams params_;
    FaultState state_;
    const Clock& clock_;
    std::unordered_map<std::uint64_t, TimePoint> posted_at_;  // cookie -> post time, with a delay only
    std::deque<Held> held_;  // released in order: a held completion also holds those behind it
    std::unordered_set<std::uint64_t> probes_;  // cookies of probes in flight (status_error_rate set only)
};

} // namespace tent
