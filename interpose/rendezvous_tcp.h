// The network side of the interposer's rendezvous (tent(7), THE
// INTERPOSER): a peer's GID names an IP address of its host, where every
// tent process of the user that is waiting for a peer listens on one shared
// TCP port (interpose_rendezvous_port).
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstdint>

#include "rendezvous_channel.h"

namespace tent::interpose {

struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t len = 0;
};

// The IP address GID names, with PORT: a RoCE v2 IPv4-mapped GID
// (::ffff:a.b.c.d) or a global IPv6 GID. False for the GIDs that name no
// address of a host: unspecified, link-local (InfiniBand's default subnet
// prefix fe80::/10) and multicast.
bool gid_socket_address(const ibv_gid& gid, std::uint16_t port, SocketAddress* out);

// A listener on PORT of every address of the host (IPv6 and IPv4), bound
// with SO_REUSEPORT so that every waiting tent process of this user shares
// it (the kernel spreads connections over them); invalid when the port is
// taken (another user's tent, another program) or IP is unusable.
UniqueFd listen_shared(std::uint16_t port);

// A TCP connection to A before DEADLINE; invalid when refused, unreachable
// or too slow.
UniqueFd dial(const SocketAddress& a, RendezvousClock::time_point deadline);

} // namespace tent::interpose
