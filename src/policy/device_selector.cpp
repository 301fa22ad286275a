#include "policy/device_selector.h"

#include <algorithm>
#include <cmath>

namespace tent {

namespace {

struct RankContext {
    int caller_numa;
    std::size_t cursor;
    std::size_t rail_count;
    const BandwidthParams& bandwidth;
};

int numa_tier(const RailView& r, int caller_numa) {
    return caller_numa < 0 || r.numa_node == caller_numa ? 0 : 1;
}

// Seconds the rail needs to drain what it already carries.
double load(const RailView& r, const BandwidthParams& bw) {
    return static_cast<double>(r.inflight_bytes) / effective_bandwidth(r.ewma_bw, bw);
}

// The whole selection order in one comparison, criterion by criterion as
// stated in device_selector.h.
bool better(std::size_t a, std::size_t b, std::span<const RailView> rails, const RankContext& ctx) {
    const RailView& ra = rails[a];
    const RailView& rb = rails[b];
    if (ra.state != rb.state) return ra.state < rb.state;
    int ta = numa_tier(ra, ctx.caller_numa), tb = numa_tier(rb, ctx.caller_numa);
    if (ta != tb) return ta < tb;
    double la = load(ra, ctx.bandwidth), lb = load(rb, ctx.bandwidth);
    if (la != lb) return la < lb;
    if (ra.answer_waiting != rb.answer_waiting) return ra.answer_waiting;
    std::size_t da = (a + ctx.rail_count - ctx.cursor % ctx.rail_count) % ctx.rail_count;
    std::size_t db = (b + ctx.rail_count - ctx.cursor % ctx.rail_count) % ctx.rail_count;
    return da < db;
}

// Equal finish time ("water filling"): rail i gets bw_i * (T - d_i) bytes,
// d_i being the time it needs to drain its inflight bytes, with T chosen so
// the shares add up to total; rails already busy past T get nothing.
void fill_equal_finish(std::span<const RailView> rails, const std::vector<std::size_t>& active, double total,
                       const BandwidthParams& bw, std::vector<double>& share) {
    std::vector<std::size_t> by_drain = active;
    std::sort(by_drain.begin(), by_drain.end(),
              [&](std::size_t a, std::size_t b) { return load(rails[a], bw) < load(rails[b], bw); });
    double bw_sum = 0.0, backlog = 0.0, finish = 0.0;
    std::size_t used = 0;
    while (used < by_drain.size()) {
        const RailView& r = rails[by_drain[used]];
        bw_sum += effective_bandwidth(r.ewma_bw, bw);
        backlog += static_cast<double>(r.inflight_bytes);
        finish = (total + backlog) / bw_sum;
        ++used;
        if (used < by_drain.size() && finish <= load(rails[by_drain[used]], bw)) break;
    }
    std::fill(share.begin(), share.end(), 0.0);
    for (std::size_t k = 0; k < used; ++k) {
        const RailView& r = rails[by_drain[k]];
        share[by_drain[k]] = std::max(0.0, effective_bandwidth(r.ewma_bw, bw) * (finish - load(r, bw)));
    }
}

// The views stripe() fills shares by when the thread-moved rails among
// `active` are several and every one has a link speed: those rails share
// their estimates' sum in proportion to the speeds (device_selector.h).
// Empty (no copy, no allocation) when the estimates stand.
std::vector<RailView> by_link_speed(std::span<const RailView> rails, const std::vector<std::size_t>& active,
                                    const BandwidthParams& bw) {
    double estimated = 0.0, link_sum = 0.0;
    std::size_t moved = 0;
    for (std::size_t i : active) {
        if (!rails[i].thread_moved) continue;
        if (rails[i].link_rate <= 0.0) return {};
        estimated += effective_bandwidth(rails[i].ewma_bw, bw);
        link_sum += rails[i].link_rate;
        ++moved;
    }
    if (moved < 2) return {};
    // Bytes/s per link bit of speed; no rail above the clamp, which would
    // undo the proportions (unmeasured rails count as max_bw each).
    double per_rate = estimated / link_sum;
    for (std::size_t i : active)
        if (rails[i].thread_moved) per_rate = std::min(per_rate, bw.max_bw / rails[i].link_rate);
    std::vector<RailView> seen(rails.begin(), rails.end());
    for (std::size_t i : active)
        if (rails[i].thread_moved) seen[i].ewma_bw = per_rate * rails[i].link_rate;
    return seen;
}

bool allowed(const RailView& r, std::uint64_t mask) {
    return r.device >= 0 && r.device < 64 && ((mask >> r.device) & 1u);
}

} // namespace

DeviceSelectorParams DeviceSelectorParams::from_config(const Config& config) {
    DeviceSelectorParams p;
    p.bandwidth = BandwidthParams::from_config(config);
    p.striping_min_chunk = static_cast<std::uint64_t>(config.get_int(Knob::StripingMinChunk));
    return p;
}

std::vector<std::size_t> DeviceSelector::rank(std::span<const RailView> rails, std::uint64_t device_mask,
                                              int caller_numa) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < rails.size(); ++i)
        if (allowed(rails[i], device_mask)) out.push_back(i);
    RankContext ctx{caller_numa, cursor_, rails.size(), params_.bandwidth};
    std::sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return better(a, b, rails, ctx); });
    return out;
}

std::optional<std::size_t> DeviceSelector::pick(std::span<const RailView> rails, std::uint64_t device_mask,
                                                int caller_numa) {
    // rank()'s first, found in one pass (better() orders rails totally):
    // a message's plan picks a rail per fragment, and rank() allocates.
    RankContext ctx{caller_numa, cursor_, rails.size(), params_.bandwidth};
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < rails.size(); ++i)
        if (allowed(rails[i], device_mask) && (!best || better(i, *best, rails, ctx))) best = i;
    if (!best || rails[*best].state == RailState::Paused) return std::nullopt;
    cursor_ = (*best + 1) % rails.size();
    return best;
}

std::vector<StripeShare> DeviceSelector::stripe(std::span<const RailView> rails, std::uint64_t device_mask,
                                                int caller_numa, std::uint64_t length) {
    auto ranked = rank(rails, device_mask, caller_numa);
    if (ranked.empty() || length == 0) return {};
    RailState best = rails[ranked.front()].state;
    if (best == RailState::Paused) return {};
    std::erase_if(ranked, [&](std::size_t i) { return rails[i].state != best; });

    const double total = static_cast<double>(length);
    const double min_chunk = static_cast<double>(params_.striping_min_chunk);
    std::vector<std::size_t> active = ranked;
    std::vector<double> share(rails.size(), 0.0);
    const std::vector<RailView> by_speed = by_link_speed(rails, ranked, params_.bandwidth);
    const std::span<const RailView> seen = by_speed.empty() ? rails : std::span<const RailView>(by_speed);

    // Rails whose share is below the minimum chunk are dropped, smallest
    // first, and the rest re-filled.
    for (;;) {
        fill_equal_finish(seen, active, total, params_.bandwidth, share);
        std::erase_if(active, [&](std::size_t i) { return share[i] <= 0.0; });
        if (active.size() <= 1) break;
        auto small = std::min_element(active.begin(), active.end(),
                                      [&](std::size_t a, std::size_t b) { return share[a] < share[b]; });
        if (share[*small] >= min_chunk) break;
        active.erase(small);
    }

    if (active.size() <= 1) {
        // Not worth splitting: one rail, chosen (and rotated) like pick().
        cursor_ = (ranked.front() + 1) % rails.size();
        return {StripeShare{ranked.front(), 0, length}};
    }

    // Whole bytes in rank order; rounding leftovers go to the largest share.
    std::vector<StripeShare> out;
    std::uint64_t assigned = 0;
    std::size_t largest = 0;
    for (std::size_t i : ranked) {
        if (std::find(active.begin(), active.end(), i) == active.end()) continue;
        auto bytes = static_cast<std::uint64_t>(std::floor(share[i]));
        out.push_back(StripeShare{i, 0, bytes});
        assigned += bytes;
        if (bytes > out[largest].length) largest = out.size() - 1;
    }
    // Floating-point shares may round to a few bytes over or under.
    out[largest].length = length - (assigned - out[largest].length);
    std::uint64_t offset = 0;
    for (auto& s : out) {
        s.offset = offset;
        offset += s.length;
    }
    return out;
}

} // namespace tent
