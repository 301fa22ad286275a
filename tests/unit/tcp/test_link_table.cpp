// Kernel link and address events decide which TCP rails pause at once
// (issue 22, point 6): an interface that goes down or loses its carrier, or
// the removal of a rail's local address, gives Down for every watched
// address on it, once; the link or address coming back gives Up, once;
// other interfaces and unwatched addresses give nothing. The rtnetlink
// decoder turns the kernel's messages into those events and skips what it
// does not understand.
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cstring>

#include "transport/tcp/link_table.h"
#include "transport/tcp/link_watch.h"

using namespace tent::tcp;

namespace {

LinkChange link(int ifindex, bool running) { return LinkChange{LinkChange::Kind::Link, ifindex, running, ""}; }
LinkChange added(int ifindex, const char* a) { return LinkChange{LinkChange::Kind::AddressAdded, ifindex, false, a}; }
LinkChange removed(int ifindex, const char* a) {
    return LinkChange{LinkChange::Kind::AddressRemoved, ifindex, false, a};
}
LinkVerdict down(const char* a) { return LinkVerdict{a, true}; }
LinkVerdict up(const char* a) { return LinkVerdict{a, false}; }
const LinkState kUp{3, true, true};

// Two rails' addresses on interface 3, a third on interface 4.
LinkTable table() {
    LinkTable t;
    t.watch("10.0.1.2", kUp);
    t.watch("10.0.1.3", kUp);
    t.watch("10.0.2.2", LinkState{4, true, true});
    return t;
}

} // namespace

Test(link_table, link_down_pauses_every_address_on_it_once) {
    LinkTable t = table();
    auto v = t.apply(link(3, false));
    cr_assert_eq(v.size(), 2u);
    cr_assert(v[0] == down("10.0.1.2") && v[1] == down("10.0.1.3"));
    // The kernel repeats RTM_NEWLINK for other flag changes: no second verdict.
    cr_assert(t.apply(link(3, false)).empty());
    auto back = t.apply(link(3, true));
    cr_assert_eq(back.size(), 2u);
    cr_assert(back[0] == up("10.0.1.2") && back[1] == up("10.0.1.3"));
    cr_assert(t.apply(link(3, true)).empty());
}

Test(link_table, other_interfaces_give_nothing) {
    LinkTable t = table();
    cr_assert(t.apply(link(7, false)).empty());
    cr_assert(t.apply(removed(7, "10.9.9.9")).empty());
    // The watched address removed from an interface it is not on stays.
    cr_assert(t.apply(removed(4, "10.0.1.2")).empty());
    auto v = t.apply(link(4, false));
    cr_assert_eq(v.size(), 1u);
    cr_assert(v[0] == down("10.0.2.2"));
}

Test(link_table, address_removed_and_added_back) {
    LinkTable t = table();
    auto v = t.apply(removed(3, "10.0.1.3"));
    cr_assert_eq(v.size(), 1u);
    cr_assert(v[0] == down("10.0.1.3"));
    // Its link going down and up again does not bring it back: it is gone.
    cr_assert_eq(t.apply(link(3, false)).size(), 1u);  // 10.0.1.2 only
    cr_assert_eq(t.apply(link(3, true)).size(), 1u);
    auto back = t.apply(added(3, "10.0.1.3"));
    cr_assert_eq(back.size(), 1u);
    cr_assert(back[0] == up("10.0.1.3"));
}

Test(link_table, address_added_on_a_down_link_stays_down) {
    LinkTable t = table();
    cr_assert_eq(t.apply(removed(3, "10.0.1.2")).size(), 1u);
    cr_assert_eq(t.apply(link(5, false)).size(), 0u);
    // Moved to interface 5, which is down: still unusable, no verdict.
    cr_assert(t.apply(added(5, "10.0.1.2")).empty());
    auto v = t.apply(link(5, true));
    cr_assert_eq(v.size(), 1u);
    cr_assert(v[0] == up("10.0.1.2"));
}

Test(link_table, watched_while_down_gives_up_when_it_returns) {
    LinkTable t;
    t.watch("10.0.1.2", LinkState{3, true, false});
    cr_assert(t.apply(link(3, false)).empty());
    auto v = t.apply(link(3, true));
    cr_assert_eq(v.size(), 1u);
    cr_assert(v[0] == up("10.0.1.2"));
    // Watching again keeps what the table knows.
    t.watch("10.0.1.2", LinkState{});
    cr_assert(t.watched().at("10.0.1.2").usable());
}

Test(link_table, resync_after_lost_events) {
    LinkTable t = table();
    std::map<std::string, LinkState> now{{"10.0.1.2", LinkState{3, true, false}},
                                         {"10.0.1.3", LinkState{3, true, false}},
                                         {"10.0.2.2", LinkState{4, true, true}}};
    auto v = t.resync(now);
    cr_assert_eq(v.size(), 2u);
    cr_assert(v[0] == down("10.0.1.2") && v[1] == down("10.0.1.3"));
    now.erase("10.0.2.2");  // gone from every interface
    now["10.0.1.2"].running = now["10.0.1.3"].running = true;
    v = t.resync(now);
    cr_assert_eq(v.size(), 3u);
    cr_assert(v[0] == up("10.0.1.2") && v[1] == up("10.0.1.3") && v[2] == down("10.0.2.2"));
}

// --- the rtnetlink decoder ---------------------------------------------------

namespace {

void append(std::vector<std::uint8_t>& out, const void* p, std::size_t n) {
    auto b = static_cast<const std::uint8_t*>(p);
    out.insert(out.end(), b, b + n);
    out.resize(NLMSG_ALIGN(out.size()));
}

void link_message(std::vector<std::uint8_t>& out, std::uint16_t type, int index, unsigned flags) {
    nlmsghdr h{};
    h.nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg));
    h.nlmsg_type = type;
    ifinfomsg i{};
    i.ifi_index = index;
    i.ifi_flags = flags;
    append(out, &h, sizeof h);
    append(out, &i, sizeof i);
}

void addr_message(std::vector<std::uint8_t>& out, std::uint16_t type, int index, const char* a,
                  unsigned char family = AF_INET) {
    nlmsghdr h{};
    h.nlmsg_len = NLMSG_LENGTH(sizeof(ifaddrmsg)) + RTA_LENGTH(4);
    h.nlmsg_type = type;
    ifaddrmsg i{};
    i.ifa_family = family;
    i.ifa_index = static_cast<unsigned>(index);
    rtattr r{};
    r.rta_len = RTA_LENGTH(4);
    r.rta_type = IFA_LOCAL;
    in_addr addr{};
    inet_pton(AF_INET, a, &addr);
    append(out, &h, sizeof h);
    append(out, &i, sizeof i);
    std::size_t at = out.size();
    out.resize(at + RTA_LENGTH(4));
    std::memcpy(out.data() + at, &r, sizeof r);
    std::memcpy(out.data() + at + RTA_LENGTH(0), &addr, 4);
}

} // namespace

Test(link_decode, link_and_address_messages) {
    std::vector<std::uint8_t> bytes;
    link_message(bytes, RTM_NEWLINK, 3, IFF_UP | IFF_RUNNING);
    link_message(bytes, RTM_NEWLINK, 3, IFF_UP);  // no carrier
    link_message(bytes, RTM_DELLINK, 4, IFF_UP | IFF_RUNNING);
    addr_message(bytes, RTM_DELADDR, 3, "10.0.1.2");
    addr_message(bytes, RTM_NEWADDR, 5, "10.0.1.3");
    addr_message(bytes, RTM_NEWADDR, 5, "10.0.1.4", AF_INET6);  // not IPv4: skipped
    std::vector<LinkChange> out;
    decode_link_messages(bytes, out);
    cr_assert_eq(out.size(), 5u);
    cr_assert(out[0].kind == LinkChange::Kind::Link && out[0].ifindex == 3 && out[0].running);
    cr_assert(out[1].kind == LinkChange::Kind::Link && !out[1].running);
    cr_assert(out[2].kind == LinkChange::Kind::Link && out[2].ifindex == 4 && !out[2].running);
    cr_assert(out[3].kind == LinkChange::Kind::AddressRemoved && out[3].ifindex == 3 && out[3].address == "10.0.1.2");
    cr_assert(out[4].kind == LinkChange::Kind::AddressAdded && out[4].ifindex == 5 && out[4].address == "10.0.1.3");
}

Test(link_decode, truncated_and_malformed_input_is_skipped) {
    std::vector<std::uint8_t> whole;
    link_message(whole, RTM_NEWLINK, 3, IFF_UP | IFF_RUNNING);
    addr_message(whole, RTM_DELADDR, 3, "10.0.1.2");
    // Every prefix decodes without reading past its end (ASan would see it).
    for (std::size_t n = 0; n < whole.size(); ++n) {
        std::vector<std::uint8_t> part(whole.begin(), whole.begin() + static_cast<long>(n));
        std::vector<LinkChange> out;
        decode_link_messages(part, out);
        cr_assert(out.size() <= 1u);
    }
    // A length field smaller than a header, or larger than the datagram.
    std::vector<std::uint8_t> bad = whole;
    nlmsghdr h;
    std::memcpy(&h, bad.data(), sizeof h);
    h.nlmsg_len = 3;
    std::memcpy(bad.data(), &h, sizeof h);
    std::vector<LinkChange> out;
    decode_link_messages(bad, out);
    cr_assert(out.empty());
    h.nlmsg_len = 1u << 20;
    std::memcpy(bad.data(), &h, sizeof h);
    decode_link_messages(bad, out);
    cr_assert(out.empty());
}
