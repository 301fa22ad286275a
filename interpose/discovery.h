// Finding the tent peer behind a queue pair (see tent(7), THE INTERPOSER):
// from what the program gave ibv_modify_qp, on a thread of its own so that
// ibv_modify_qp never waits, within interpose_discovery_ms.
#pragma once

#include <memory>
#include <string>

#include "shadow_qp.h"

namespace tent::interpose {

// The rendezvous name of one end of a connection: its port's GID and its
// QP number (unique per host; the GID names the host on the network).
std::string rendezvous_name(const ibv_gid& gid, std::uint32_t qpn);

// Starts looking for the peer of Q; calls become_tent() or become_plain().
void start_discovery(std::shared_ptr<ShadowQp> q, std::string self_name, std::string peer_name,
                     int timeout_ms);

} // namespace tent::interpose
