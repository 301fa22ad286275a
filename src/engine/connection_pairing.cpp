#include "engine/connection_pairing.h"

namespace tent {

HelloAnswer answer_for_hello(std::uint64_t own_engine, std::uint64_t peer_engine, const PairingState& state) {
    if (own_engine == peer_engine) return HelloAnswer::Accept;  // an engine connected to itself: no pair
    if (state.live) return HelloAnswer::Crossed;
    if (state.dialing && own_engine < peer_engine) return HelloAnswer::Crossed;
    return HelloAnswer::Accept;
}

DialStep next_dial_step(const DialState& state) {
    if (state.live) return DialStep::Reuse;
    if (state.dialing || state.answer_pending) return DialStep::Wait;
    return DialStep::Dial;
}

} // namespace tent
