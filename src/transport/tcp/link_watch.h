// LinkWatch: the kernel's link and address events (rtnetlink, groups
// RTMGRP_LINK and RTMGRP_IPV4_IFADDR) on one non-blocking socket, which the
// TCP provider hands to the engine as an event descriptor: the engine's
// driver sleeps on it with its other descriptors and reads it in its next
// service turn (no thread of its own). What the events mean for the rails
// is link_table.h's decision.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "transport/tcp/link_table.h"

namespace tent::tcp {

class LinkWatch {
public:
    static Result<LinkWatch> open();

    int fd() const { return fd_.get(); }
    // Non-blocking: appends the changes waiting on the socket. Returns false
    // when the kernel dropped some (the socket's buffer overflowed): the
    // caller then looks at the addresses afresh (link_states_now).
    bool read(std::vector<LinkChange>& out);

private:
    explicit LinkWatch(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

// Decodes one datagram of rtnetlink messages: RTM_NEWLINK / RTM_DELLINK and
// IPv4 RTM_NEWADDR / RTM_DELADDR; anything else, and truncated or malformed
// messages, are skipped.
void decode_link_messages(std::span<const std::uint8_t> bytes, std::vector<LinkChange>& out);

// The present state of these IPv4 addresses (getifaddrs); an address not
// assigned anywhere gets LinkState{} (not usable).
std::map<std::string, LinkState> link_states_now(const std::vector<std::string>& addresses);

} // namespace tent::tcp
