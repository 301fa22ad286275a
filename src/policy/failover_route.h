// Which rails a failed piece (a chunk of a WRITE/READ, a fragment of a SEND)
// may go to next. Pure: the engine describes each rail of the connection and
// keeps, per piece, the transports it has left behind.
//
// The rule, in order:
//   1. transports are tried in the request's fallback list order (its hint,
//      then its [policy] rule's transports, else RDMA then TCP);
//   2. a transport the piece failed on and then left for a later one is never
//      used again for that piece, even once its rails work again: failover
//      only moves forward through the list;
//   3. within a transport, the piece may use every usable rail it has not
//      failed on, or that has worked since (the surviving HCAs of RDMA, the
//      other TCP rails);
//   4. a transport whose usable rails are all paused is passed over for the
//      next (not left behind: the piece never failed there);
//   5. with no rail to go to, the piece waits for one (rails come back),
//      unless every rail it may use belongs to a transport it left behind:
//      then failover is exhausted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/transport_kind.h"

namespace tent {

// One rail of the connection, as the choice sees it.
struct RouteRail {
    TransportKind kind = TransportKind::Tcp;
    bool allowed = true;       // by the request's rule (device mask) and size
    bool usable = true;        // in use: not failed, not being re-armed
    bool paused = false;       // paused by the health monitor
    bool failed_here = false;  // this piece failed on it and it has not worked since
};

// Transports (bit per TransportKind) one piece failed on and left behind.
struct RouteMemory {
    std::uint32_t left = 0;
    bool has_left(TransportKind k) const { return left & (1u << static_cast<unsigned>(k)); }
};

enum class RouteVerdict {
    Rails,      // post on one of `rails`
    Wait,       // no rail now; one may come back
    Exhausted,  // every rail the piece may use is on a transport it left behind
    NoRail,     // no rail to the peer is allowed for this request at all
};

struct RouteChoice {
    RouteVerdict verdict = RouteVerdict::Wait;
    std::vector<std::size_t> rails;  // Rails: indices into the rail list, all of one transport
};

// fallback: the request's transports in order. memory is updated when the
// piece moves to a later transport than ones it failed on.
RouteChoice choose_failover_rails(std::span<const TransportKind> fallback, const std::vector<RouteRail>& rails,
                                  RouteMemory& memory);

} // namespace tent
