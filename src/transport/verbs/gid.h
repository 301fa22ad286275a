// GID selection: RoCE v2 ports list one GID per IP address; the one of the
// form ::ffff:a.b.c.d names an IPv4 address and routes over IPv4/UDP, which
// is what a rail between two hosts' RoCE ports needs. InfiniBand ports have
// no such entry and use index 0 (the port GID) with the LID.
#pragma once

#include <infiniband/verbs.h>

#include <span>
#include <string>

namespace tent {

// True for ::ffff:a.b.c.d.
bool is_ipv4_mapped(const ibv_gid& gid);
bool is_zero(const ibv_gid& gid);

// The first IPv4-mapped GID's index, or -1 if none.
int select_ipv4_gid(std::span<const ibv_gid> table);

// "fe80::1" / "::ffff:127.0.0.1" style text, for logs.
std::string gid_text(const ibv_gid& gid);

} // namespace tent
