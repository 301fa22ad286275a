// One connection per pair of engines. Both ends of a pair often connect to
// each other at about the same time (two verbs programs reaching RTR, two
// MPI ranks sending first): two connections would carry one direction each,
// so no acknowledgement could ride with a reply and every turn would drive
// twice the rails. Whichever engine dials, both then use the same
// connection (a connection carries both directions):
//  - connect() returns the live connection it already has with that engine,
//    whoever opened it; while one is on its way (its own dial from another
//    thread, or a peer's Hello answered whose Proof has not come) it waits
//    for it;
//  - a responder answers Crossed to a Hello from an engine it already has a
//    live connection with, or is dialing itself while its engine id is the
//    lower: the dial of the lower id goes on and the other side's connect()
//    returns that connection once it arrives. Ids break the tie, so two
//    crossing dials never both give way. A responder may also hold a
//    connection its peer gave up and closed, until it sees the close: the
//    peer's connect() then says Hello again when nothing arrived
//    (Engine::kCrossedRecheck).
// Pure: the engine (engine_connect.cpp) gathers the state under its mutex.
#pragma once

#include <cstdint>

namespace tent {

// What a responder answers a Hello from peer_engine.
enum class HelloAnswer { Accept, Crossed };

struct PairingState {
    bool live = false;     // a live connection with the peer engine exists
    bool dialing = false;  // this engine's connect() to it is under way
};

HelloAnswer answer_for_hello(std::uint64_t own_engine, std::uint64_t peer_engine, const PairingState& state);

// What connect() does next.
enum class DialStep {
    Reuse,  // return the live connection
    Wait,   // one is on its way: wait for it (bounded), then ask again
    Dial,   // open a new one
};

struct DialState {
    bool live = false;            // a live connection with the engine exists
    bool dialing = false;         // another thread of this engine dials it
    bool answer_pending = false;  // its Hello was accepted here; its Proof is due
};

DialStep next_dial_step(const DialState& state);

} // namespace tent
