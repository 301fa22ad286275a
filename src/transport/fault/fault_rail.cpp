#include "transport/fault/fault_rail.h"

namespace tent {

FaultRail::FaultRail(std::unique_ptr<Rail> inner, const FaultParams& params, FaultState state, const Clock& clock)
    : inner_(std::move(inner)), params_(params), state_(state), clock_(clock) {}

Status FaultRail::post(const RailOp& op) {
    if (post_fails(params_, state_)) return Status(Code::TransportError, name() + ": injected post failure");
    Status s = inner_->post(op);
    if (!s) return s;
    if (params_.post_delay > Duration::zero()) posted_at_[op.cookie] = clock_.now();
    if (op.opcode == RailOpcode::Probe && params_.status_error_rate > 0) probes_.insert(op.cookie);
    return s;
}

void FaultRail::progress(std::vector<RailCompletion>& done,
                         const std::function<void(const RailMessage&)>& on_message) {
    const std::size_t first = done.size();
    inner_->progress(done, on_message);
    for (std::size_t i = first; i < done.size(); ++i) {
        RailCompletion& c = done[i];
        if (!probes_.empty() && probes_.erase(c.cookie)) continue;
        if (c.status && status_corrupted(params_, state_)) {
            c.outcome = RailOutcome::RetryExceeded;
            c.status = Status(Code::TransportError, name() + ": injected completion error");
        }
    }
    if (params_.post_delay == Duration::zero()) return;
    for (std::size_t i = first; i < done.size(); ++i) {
        TimePoint posted = clock_.now();
        if (auto it = posted_at_.find(done[i].cookie); it != posted_at_.end()) {
            posted = it->second;
            posted_at_.erase(it);
        }
        done[i].latency += params_.post_delay;
        held_.push_back(Held{posted + params_.post_delay, std::move(done[i])});
    }
    done.resize(first);
    const TimePoint now = clock_.now();
    while (!held_.empty() && held_.front().release <= now) {
        done.push_back(std::move(held_.front().completion));
        held_.pop_front();
    }
}

TimePoint FaultRail::next_timer() const {
    TimePoint t = inner_->next_timer();
    if (!held_.empty()) t = std::min(t, held_.front().release);
    return t;
}

} // namespace tent
