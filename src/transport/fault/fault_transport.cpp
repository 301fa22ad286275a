#include "transport/fault/fault_transport.h"

#include "common/log.h"

namespace tent {

namespace {

// splitmix64: tiny, well mixed, and the same sequence on every platform
// (std distributions are not specified bit for bit).
std::uint64_t next_random(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

} // namespace

FaultInjectingTransport::FaultInjectingTransport(std::unique_ptr<Transport> inner, FaultSpec spec,
                                                 const Clock& clock)
    : inner_(std::move(inner)), spec_(spec), clock_(clock), rng_state_(spec.seed) {}

bool FaultInjectingTransport::roll(double rate) {
    if (rate <= 0.0) return false;
    if (rate >= 1.0) return true;
    // 53 random bits -> uniform double in [0, 1).
    double u = static_cast<double>(next_random(rng_state_) >> 11) * 0x1.0p-53;
    return u < rate;
}

Status FaultInjectingTransport::install() {
    if (spec_.fail_at_install) {
        TENT_DEBUG("fault install", "%s: injected install failure", name().c_str());
        return Status(Code::TransportError, name() + ": injected install failure");
    }
    return inner_->install();
}

void FaultInjectingTransport::uninstall() {
    inner_->uninstall();
    held_.clear();
    submitted_at_.clear();
}

Status FaultInjectingTransport::submit(const TransferRequest& request) {
    ++submits_seen_;
    bool dead = spec_.fail_after_n_submits >= 0 &&
                submits_seen_ > static_cast<std::uint64_t>(spec_.fail_after_n_submits);
    if (dead || roll(spec_.submit_failure_rate)) {
        ++injected_submit_failures_;
        return Status(Code::RailDown, name() + ": injected submit failure");
    }
    Status st = inner_->submit(request);
    if (st) submitted_at_[request.id] = clock_.now();
    return st;
}

void FaultInjectingTransport::drain_inner() {
    std::vector<Completion> got;
    // Bounded: the inner transport reports at most what was submitted.
    while (inner_->poll(got, 64) > 0) {
    }
    for (auto& c : got) {
        TimePoint submitted = clock_.now();
        if (auto it = submitted_at_.find(c.request_id); it != submitted_at_.end()) {
            submitted = it->second;
            submitted_at_.erase(it);
        }
        if (c.status && roll(spec_.completion_corruption_rate)) {
            ++injected_completion_errors_;
            c.status = Status(Code::TransportError, name() + ": injected completion error");
        }
        held_.push_back(Held{submitted + spec_.added_delay, std::move(c)});
    }
}

std::size_t FaultInjectingTransport::poll(std::vector<Completion>& out, std::size_t max) {
    drain_inner();
    // Released in arrival order: a held completion also holds the ones behind
    // it, as a slow link would.
    std::size_t n = 0;
    TimePoint now = clock_.now();
    while (n < max && !held_.empty() && held_.front().ready <= now) {
        out.push_back(std::move(held_.front().completion));
        held_.pop_front();
        ++n;
    }
    return n;
}

} // namespace tent
