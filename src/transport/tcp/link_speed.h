// The nominal speed of the link a TCP rail's local address is on, as its
// interface reports it (/sys/class/net/NAME/speed, in Mbit/s, what ethtool
// shows). The device selector splits a transfer over TCP rails by these
// speeds rather than by their measured delivery (device_selector.h says
// why); Open MPI's tcp BTL weighs its interfaces by the same figure.
#pragma once

#include <string>
#include <string_view>

namespace tent::tcp {

// Bytes/s from the text of a speed file: a positive count of Mbit/s,
// optionally followed by a newline. 0 for anything else: -1 (a link that
// is down or a virtual NIC that reports no speed), empty, not a number.
double parse_link_speed(std::string_view text);

// Bytes/s of the link of interface `ifindex` (the one a rail's local
// address is on, as the provider's link watch found it); 0 when unknown:
// loopback (no speed file), a speed the interface does not report, no such
// interface (0 for an address on none). `net_class` is where the
// interfaces' directories are.
double link_speed_of(int ifindex, const std::string& net_class = "/sys/class/net");

} // namespace tent::tcp
