// Which address the interposer's engine advertises for its control
// connections. With control_address = auto the engine takes the address the
// host name resolves to, which is often a loopback address (Debian maps the
// host name to 127.0.1.1): a peer on another host could not connect. A RoCE
// GID names an address of this host on the network the peer reaches us
// through, so the first queue pair's GID decides instead.
#pragma once

#include <infiniband/verbs.h>

#include "tent/tent.h"

namespace tent::interpose {

// Notes the GID of a queue pair's own port; the first one naming an IPv4
// address (::ffff:a.b.c.d) is the engine's control address if it has not
// started yet.
void note_own_gid(const ibv_gid& gid);

// tent_engine_create() with that control address when control_address is
// auto; as configured when no GID named one, or the engine cannot listen
// there.
int create_engine(tent_engine_t** engine);

} // namespace tent::interpose
