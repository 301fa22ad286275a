#include "transport/verbs/verbs_address.h"

#include <cstring>

namespace tent {

std::uint32_t initial_psn(std::uint32_t qpn) {
    // Multiplicative hash (Knuth): spreads neighbouring QP numbers apart.
    return (qpn * 2654435761u) >> 8;
}

wire::HcaAddress hca_address(const VerbsDevice& device) {
    const auto& port = device.port();
    wire::HcaAddress h;
    h.device = device.name();
    std::memcpy(h.gid.data(), port.gid.raw, h.gid.size());
    h.port = port.port_num;
    h.lid = port.lid;
    h.link_layer = port.link_layer;
    h.mtu = static_cast<std::uint8_t>(port.active_mtu);
    return h;
}

Result<VerbsRailInfo> remote_rail_info(const wire::HcaAddress& hca, std::uint32_t qpn) {
    if (hca.mtu < IBV_MTU_256 || hca.mtu > IBV_MTU_4096)
        return Status(Code::InvalidArgument, "HCA " + hca.device + ": MTU code " + std::to_string(hca.mtu) +
                                                 " is not 1 (256) .. 5 (4096)");
    if (qpn == 0 || qpn > 0xffffff)
        return Status(Code::InvalidArgument, "HCA " + hca.device + ": QP number " + std::to_string(qpn) +
                                                 " is not 24-bit");
    VerbsRailInfo r;
    r.qpn = qpn;
    r.psn = initial_psn(qpn);
    std::memcpy(r.gid.raw, hca.gid.data(), sizeof r.gid.raw);
    r.lid = hca.lid;
    r.mtu = static_cast<ibv_mtu>(hca.mtu);
    return r;
}

} // namespace tent
