// How the target side of a TCP rail finds a registration: the engine owns
// the registrations and hands each rail a lookup from the TCP key a peer
// names in a Write or ReadRequest to the registered region. nullptr means
// no such key (the access is refused, exactly as a bad rkey on an HCA).
// The returned handle must stay valid until the rail's current progress()
// returns (it is the rail's own copy); that the region stays registered
// while its bytes move is the region use lock's work (region_use_lock.h).
#pragma once

#include <cstdint>
#include <functional>

#include "wire/memory_handle.h"

namespace tent::tcp {

using RegionLookup = std::function<const wire::MemoryHandle*(std::uint32_t tcp_key)>;

} // namespace tent::tcp
