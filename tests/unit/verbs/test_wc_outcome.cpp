// Pure pieces of the verbs rail: work-completion status -> RailOutcome, GID
// selection, the verbs_devices filter, the pairing of local and peer HCAs
// into rails, and parameters built from the knob table. No device needed.
#include <criterion/criterion.h>

#include "config/config.h"
#include "transport/verbs/device_filter.h"
#include "transport/verbs/gid.h"
#include "transport/verbs/hca_pairing.h"
#include "transport/verbs/verbs_params.h"
#include "transport/verbs/wc_outcome.h"

using namespace tent;

Test(wc_outcome, each_status_maps_to_the_outcome_the_health_layer_expects) {
    cr_expect_eq(rail_outcome_of(IBV_WC_SUCCESS), RailOutcome::Success);
    cr_expect_eq(rail_outcome_of(IBV_WC_RETRY_EXC_ERR), RailOutcome::RetryExceeded);
    cr_expect_eq(rail_outcome_of(IBV_WC_RNR_RETRY_EXC_ERR), RailOutcome::RetryExceeded);
    cr_expect_eq(rail_outcome_of(IBV_WC_WR_FLUSH_ERR), RailOutcome::Flushed);
    cr_expect_eq(rail_outcome_of(IBV_WC_REM_ACCESS_ERR), RailOutcome::RemoteAccess);
    cr_expect_eq(rail_outcome_of(IBV_WC_REM_INV_REQ_ERR), RailOutcome::RemoteAccess);
    cr_expect_eq(rail_outcome_of(IBV_WC_REM_OP_ERR), RailOutcome::RemoteAccess);
    cr_expect_eq(rail_outcome_of(IBV_WC_LOC_PROT_ERR), RailOutcome::LocalProtection);
    cr_expect_eq(rail_outcome_of(IBV_WC_LOC_LEN_ERR), RailOutcome::LocalProtection);
    cr_expect_eq(rail_outcome_of(IBV_WC_LOC_QP_OP_ERR), RailOutcome::LocalProtection);
    cr_expect_eq(rail_outcome_of(IBV_WC_RESP_TIMEOUT_ERR), RailOutcome::Timeout);
    cr_expect_eq(rail_outcome_of(IBV_WC_FATAL_ERR), RailOutcome::LocalProtection);
}

Test(wc_outcome, no_error_status_and_no_unknown_status_is_success) {
    for (int s = IBV_WC_LOC_LEN_ERR; s <= IBV_WC_TM_RNDV_INCOMPLETE + 5; ++s)
        cr_expect_neq(rail_outcome_of(static_cast<ibv_wc_status>(s)), RailOutcome::Success, "status %d", s);
}

Test(wc_outcome, failures_carry_a_rail_scoped_code) {
    cr_expect_eq(status_code_of(RailOutcome::Success), Code::Ok);
    cr_expect_eq(status_code_of(RailOutcome::ProbeAnswered), Code::Ok);
    for (auto o : {RailOutcome::RetryExceeded, RailOutcome::Flushed, RailOutcome::RemoteAccess,
                   RailOutcome::LocalProtection, RailOutcome::ProbeFailed, RailOutcome::Timeout})
        cr_expect(scope_of(status_code_of(o)) == Scope::Rail || status_code_of(o) == Code::Timeout, "%s",
                  rail_outcome_name(o));
    cr_expect_eq(status_code_of(RailOutcome::RemoteAccess), Code::RemoteAccess);
}

namespace {

ibv_gid gid_of(std::initializer_list<int> bytes) {
    ibv_gid g{};
    int i = 0;
    for (int b : bytes) g.raw[i++] = static_cast<std::uint8_t>(b);
    return g;
}

ibv_gid ipv4_gid(int a, int b, int c, int d) { return gid_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}); }

} // namespace

Test(gid, the_first_ipv4_mapped_gid_is_selected) {
    ibv_gid link_local = gid_of({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
    ibv_gid v6 = gid_of({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4});
    std::vector<ibv_gid> table{link_local, v6, ipv4_gid(10, 0, 0, 1), ipv4_gid(10, 0, 0, 2)};
    cr_expect_eq(select_ipv4_gid(table), 2);
    cr_expect_not(is_ipv4_mapped(v6), "a global IPv6 GID with ff:ff in the middle is not IPv4");
    std::vector<ibv_gid> ib{link_local, ibv_gid{}};
    cr_expect_eq(select_ipv4_gid(ib), -1);
    cr_expect_eq(select_ipv4_gid({}), -1);
    std::string text = gid_text(ipv4_gid(127, 0, 1, 2));
    cr_expect_str_eq(text.c_str(), "::ffff:127.0.1.2");
    cr_expect(is_zero(ibv_gid{}));
    cr_expect_not(is_zero(link_local));
}

namespace {
Source api() {
    Source s;
    s.kind = Source::Kind::Api;
    return s;
}
} // namespace

Test(verbs_params, built_from_the_knob_table) {
    Config defaults;
    auto p = VerbsRailParams::from_config(defaults);
    cr_expect_eq(p.qp_timeout, 14);
    cr_expect_eq(p.retry_cnt, 7);
    cr_expect_eq(p.rnr_retry, 7);
    cr_expect_eq(p.recv_buffer_size, 65536u);
    cr_expect_eq(p.gid_index, -1);
    Config c;
    cr_assert(c.set(Knob::VerbsRecvBufferSize, "1M", api()).is_ok());
    cr_assert(c.set(Knob::VerbsQpTimeout, "20", api()).is_ok());
    cr_expect_not(c.set(Knob::VerbsRetryCnt, "8", api()).is_ok(), "retry_cnt is 3 bits");
    p = VerbsRailParams::from_config(c);
    cr_expect_eq(p.recv_buffer_size, 1u << 20);
    cr_expect_eq(p.qp_timeout, 20);
}

namespace {

const std::vector<std::string> kHost{"mlx5_0", "mlx5_1", "mlx5_bond_0"};

bool chooses(std::string_view wanted, const std::vector<std::string>& expected) {
    auto r = select_devices(kHost, wanted);
    return r && *r == expected;
}

bool refuses(std::string_view wanted, const std::string& words) {
    auto r = select_devices(kHost, wanted);
    return !r && r.status().code() == Code::InvalidArgument && r.status().message().find(words) != std::string::npos;
}

} // namespace

Test(device_filter, an_empty_list_keeps_every_hca) {
    cr_expect(chooses("", kHost));
    cr_expect(chooses("  ", kHost));
}

Test(device_filter, named_hcas_are_kept_in_the_hosts_order) {
    cr_expect(chooses("mlx5_1", {"mlx5_1"}));
    cr_expect(chooses(" mlx5_bond_0 ,mlx5_0", {"mlx5_0", "mlx5_bond_0"}));
    // A name is matched whole: mlx5_0 does not select mlx5_bond_0 or the reverse.
    cr_expect(chooses("mlx5_0", {"mlx5_0"}));
}

Test(device_filter, a_name_the_host_lacks_is_an_error_listing_what_it_has) {
    cr_expect(refuses("mlx5_9", "verbs_devices names mlx5_9, which this host does not have (it has mlx5_0, mlx5_1, mlx5_bond_0)"));
    cr_expect(refuses("mlx5_0,mlx5", "names mlx5,"));
    auto none = select_devices({}, "mlx5_0");
    cr_expect(!none && none.status().message().find("(it has none)") != std::string::npos);
}

Test(device_filter, empty_and_repeated_names_are_errors) {
    cr_expect(refuses("mlx5_0,,mlx5_1", "empty name"));
    cr_expect(refuses("mlx5_0,", "empty name"));
    cr_expect(refuses(",", "empty name"));
    cr_expect(refuses("mlx5_0, mlx5_0", "names mlx5_0 twice"));
}

namespace {
using Pairs = std::vector<std::pair<std::size_t, std::size_t>>;
}

Test(hca_pairing, same_names_on_both_sides_pair_by_position) {
    cr_expect(pair_hcas({"mlx5_0", "mlx5_1"}, {"mlx5_0", "mlx5_1"}) == (Pairs{{0, 0}, {1, 1}}));
}

Test(hca_pairing, an_hca_pairs_with_the_peers_hca_of_the_same_name) {
    // The client opened only mlx5_1 (verbs_devices): its rail goes to the
    // server's mlx5_1, not to the server's first HCA.
    cr_expect(pair_hcas({"mlx5_1"}, {"mlx5_0", "mlx5_1"}) == (Pairs{{0, 1}}));
    cr_expect(pair_hcas({"mlx5_0", "mlx5_1"}, {"mlx5_1"}) == (Pairs{{1, 0}}));
    cr_expect(pair_hcas({"mlx5_0", "mlx5_1"}, {"mlx5_1", "mlx5_0"}) == (Pairs{{0, 1}, {1, 0}}));
}

Test(hca_pairing, different_names_pair_by_position_among_the_unmatched) {
    cr_expect(pair_hcas({"mlx5_0", "mlx5_1"}, {"ib0", "ib1", "ib2"}) == (Pairs{{0, 0}, {1, 1}}));
    // mlx5_1 matches by name; mlx5_0 and mlx5_2 take the peer's unmatched ib0, ib1.
    cr_expect(pair_hcas({"mlx5_0", "mlx5_1", "mlx5_2"}, {"ib0", "mlx5_1", "ib1"}) == (Pairs{{0, 0}, {1, 1}, {2, 2}}));
    cr_expect(pair_hcas({"a", "b", "c"}, {"c", "x"}) == (Pairs{{0, 1}, {2, 0}}));
}

Test(hca_pairing, no_hca_is_used_twice_and_there_are_min_of_both_rails) {
    cr_expect(pair_hcas({"mlx5_0", "mlx5_0"}, {"mlx5_0"}) == (Pairs{{0, 0}}));
    cr_expect(pair_hcas({}, {"mlx5_0"}).empty());
    cr_expect(pair_hcas({"mlx5_0"}, {}).empty());
}
