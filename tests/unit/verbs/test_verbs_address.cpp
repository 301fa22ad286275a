// The remote end of a verbs rail rebuilt from a peer's AddressBlob HCA
// entry: fields carried over, PSN derived the same way on both sides,
// nonsense refused. No device needed.
#include <criterion/criterion.h>

#include <set>

#include "transport/verbs/verbs_address.h"

using namespace tent;

Test(verbs_address, remote_end_comes_from_the_hca_entry) {
    wire::HcaAddress hca;
    hca.device = "mlx5_3";
    for (std::size_t i = 0; i < hca.gid.size(); ++i) hca.gid[i] = static_cast<std::uint8_t>(i + 1);
    hca.lid = 17;
    hca.mtu = IBV_MTU_2048;
    auto r = remote_rail_info(hca, 0x00abcd);
    cr_assert(r.is_ok(), "%s", r.status().message().c_str());
    cr_expect_eq(r->qpn, 0x00abcdu);
    cr_expect_eq(r->lid, 17);
    cr_expect_eq(r->mtu, IBV_MTU_2048);
    for (std::size_t i = 0; i < 16; ++i) cr_expect_eq(r->gid.raw[i], i + 1, "gid byte %zu", i);
    cr_expect_eq(r->psn, initial_psn(0x00abcd), "the peer's PSN is derived from its QP number");
}

Test(verbs_address, psn_is_24_bit_and_differs_between_neighbouring_qps) {
    std::set<std::uint32_t> seen;
    for (std::uint32_t qpn = 1; qpn <= 1000; ++qpn) {
        cr_assert_leq(initial_psn(qpn), 0xffffffu);
        seen.insert(initial_psn(qpn));
    }
    cr_expect_eq(seen.size(), 1000u);
    cr_expect_eq(initial_psn(77), initial_psn(77));
}

Test(verbs_address, bad_mtu_or_qpn_is_refused) {
    wire::HcaAddress hca;
    hca.device = "mlx5_0";
    hca.mtu = 0;
    cr_expect_eq(remote_rail_info(hca, 5).status().code(), Code::InvalidArgument);
    hca.mtu = 6;
    cr_expect_eq(remote_rail_info(hca, 5).status().code(), Code::InvalidArgument);
    hca.mtu = IBV_MTU_4096;
    cr_expect_eq(remote_rail_info(hca, 0).status().code(), Code::InvalidArgument);
    cr_expect_eq(remote_rail_info(hca, 0x1000000).status().code(), Code::InvalidArgument);
    cr_expect(remote_rail_info(hca, 0xffffff).is_ok());
}
