#include "transport/tcp/link_watch.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tent::tcp {

namespace {

template <typename T>
bool read_struct(std::span<const std::uint8_t> bytes, std::size_t at, T& out) {
    if (at > bytes.size() || bytes.size() - at < sizeof(T)) return false;
    std::memcpy(&out, bytes.data() + at, sizeof(T));
    return true;
}

std::string ipv4_text(const std::uint8_t* addr) {
    char buf[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, addr, buf, sizeof buf);
    return buf;
}

// The address of an RTM_*ADDR message (IFA_LOCAL, else IFA_ADDRESS: on a
// point-to-point link IFA_ADDRESS is the peer's), empty if none.
std::string address_of(std::span<const std::uint8_t> attrs) {
    std::string local, address;
    std::size_t at = 0;
    while (at + sizeof(rtattr) <= attrs.size()) {
        rtattr a;
        read_struct(attrs, at, a);
        if (a.rta_len < sizeof(rtattr) || a.rta_len > attrs.size() - at) break;
        if (a.rta_len - RTA_LENGTH(0) == 4 && (a.rta_type == IFA_LOCAL || a.rta_type == IFA_ADDRESS)) {
            std::string text = ipv4_text(attrs.data() + at + RTA_LENGTH(0));
            (a.rta_type == IFA_LOCAL ? local : address) = text;
        }
        at += RTA_ALIGN(a.rta_len);
    }
    return local.empty() ? address : local;
}

} // namespace

void decode_link_messages(std::span<const std::uint8_t> bytes, std::vector<LinkChange>& out) {
    std::size_t at = 0;
    while (at + sizeof(nlmsghdr) <= bytes.size()) {
        nlmsghdr h;
        read_struct(bytes, at, h);
        if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > bytes.size() - at) return;
        const auto body = bytes.subspan(at + NLMSG_HDRLEN, h.nlmsg_len - std::min<std::size_t>(h.nlmsg_len, NLMSG_HDRLEN));
        switch (h.nlmsg_type) {
        case RTM_NEWLINK:
        case RTM_DELLINK: {
            ifinfomsg info;
            if (!read_struct(body, 0, info)) break;
            LinkChange c;
            c.kind = LinkChange::Kind::Link;
            c.ifindex = info.ifi_index;
            c.running = h.nlmsg_type == RTM_NEWLINK && (info.ifi_flags & IFF_UP) && (info.ifi_flags & IFF_RUNNING);
            out.push_back(std::move(c));
            break;
        }
        case RTM_NEWADDR:
        case RTM_DELADDR: {
            ifaddrmsg info;
            if (!read_struct(body, 0, info) || info.ifa_family != AF_INET) break;
            const std::size_t attrs_at = NLMSG_ALIGN(sizeof(ifaddrmsg));
            if (attrs_at > body.size()) break;
            std::string address = address_of(body.subspan(attrs_at));
            if (address.empty()) break;
            LinkChange c;
            c.kind = h.nlmsg_type == RTM_NEWADDR ? LinkChange::Kind::AddressAdded : LinkChange::Kind::AddressRemoved;
            c.ifindex = static_cast<int>(info.ifa_index);
            c.address = std::move(address);
            out.push_back(std::move(c));
            break;
        }
        default: break;
        }
        at += NLMSG_ALIGN(h.nlmsg_len);
    }
}

Result<LinkWatch> LinkWatch::open() {
    UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (!fd) return Status::from_errno(errno, "rtnetlink socket");
    sockaddr_nl local{};
    local.nl_family = AF_NETLINK;
    local.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
        return Status::from_errno(errno, "bind rtnetlink socket to the link and address groups");
    return LinkWatch(std::move(fd));
}

bool LinkWatch::read(std::vector<LinkChange>& out) {
    alignas(nlmsghdr) std::uint8_t buf[16384];
    bool complete = true;
    // Bounded: a flapping host cannot keep a turn here.
    for (int i = 0; i < 64; ++i) {
        ssize_t n = ::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOBUFS) {
                complete = false;
                continue;
            }
            break;  // EAGAIN: nothing more
        }
        decode_link_messages(std::span<const std::uint8_t>(buf, static_cast<std::size_t>(n)), out);
    }
    return complete;
}

std::map<std::string, LinkState> link_states_now(const std::vector<std::string>& addresses) {
    std::map<std::string, LinkState> states;
    for (const auto& a : addresses) states[a] = LinkState{};
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return states;
    for (const ifaddrs* i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        sockaddr_in sin;
        std::memcpy(&sin, i->ifa_addr, sizeof sin);
        auto it = states.find(ipv4_text(reinterpret_cast<const std::uint8_t*>(&sin.sin_addr)));
        if (it == states.end()) continue;
        // An alias label ("eth0:1") names its interface before the colon.
        std::string name(i->ifa_name);
        name = name.substr(0, name.find(':'));
        const unsigned index = ::if_nametoindex(name.c_str());
        if (index == 0) continue;
        it->second = LinkState{static_cast<int>(index), true,
                               (i->ifa_flags & IFF_UP) != 0 && (i->ifa_flags & IFF_RUNNING) != 0};
    }
    ::freeifaddrs(list);
    return states;
}

} // namespace tent::tcp
