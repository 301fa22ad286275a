// The order of a queue pair's one-sided work requests over tent, whose
// rails may complete them in any order: what waits for what (fences,
// interpose_ordering) and when held parts may go. Atomics keep their
// posting order in tent itself (tent(3)).
#include "runtime_state.h"

namespace tent::interpose {

namespace {

// Whether SLOT's one-sided parts must wait for Q's in flight: behind every
// earlier one when fenced (IBV_SEND_FENCE, taken as a full fence); with
// interpose_ordering, a write or atomic behind every earlier one, a read
// behind every earlier write and atomic.
bool must_wait(const ShadowQp& q, const SendSlot& slot) {
    const int all = q.modifies_inflight + q.reads_inflight;
    if (slot.fenced) return all > 0;
    if (!q.ordered) return false;
    return slot.access == Access::Read ? q.modifies_inflight > 0 : all > 0;
}

} // namespace

// Counts a work request whose one-sided parts went to tent (+1) or all
// completed (-1).
void count_inflight(ShadowQp& q, Access a, int d) {
    if (a == Access::Read) q.reads_inflight += d;
    else if (a == Access::Modify) q.modifies_inflight += d;
}

// SLOT's one-sided parts, CALLS from FIRST on, stay there to go to tent now,
// or move to the slot to wait while Q's earlier ones would be overtaken
// (interpose_ordering). Built in CALLS, not a list of their own: that was
// an allocation per work request.
void start_or_hold(ShadowQp& q, SendSlot& slot, std::vector<TentCall>& calls, std::size_t first) {
    if (first == calls.size()) return;
    if (q.slots_holding > 0 || must_wait(q, slot)) {  // behind a held one too: in order
        slot.held_parts.assign(calls.begin() + static_cast<std::ptrdiff_t>(first), calls.end());
        calls.resize(first);
        ++q.slots_holding;
        return;
    }
    count_inflight(q, slot.access, +1);
}

// The held one-sided parts that may go now, in posting order (state mutex
// held; the caller makes the calls).
void release_held(ShadowQp& q, std::vector<TentCall>& calls) {
    for (std::size_t i = 0; q.slots_holding > 0 && i < q.sq.size(); ++i) {
        SendSlot& slot = q.sq[i];
        if (slot.held_parts.empty()) continue;
        if (must_wait(q, slot)) return;
        --q.slots_holding;
        count_inflight(q, slot.access, +1);
        calls.insert(calls.end(), slot.held_parts.begin(), slot.held_parts.end());
        slot.held_parts.clear();
    }
}

// Forgets Q's held one-sided parts (the QP failed: they are never posted).
void drop_held(ShadowQp& q) {
    for (SendSlot& slot : q.sq) {
        slot.onesided_parts -= static_cast<int>(slot.held_parts.size());
        slot.held_parts.clear();
    }
    q.slots_holding = 0;
}

} // namespace tent::interpose
