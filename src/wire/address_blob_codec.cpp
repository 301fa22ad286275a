// Layout of the AddressBlob body (all integers little-endian):
//   engine id u64, version min u8, version max u8,
//   hostname length u8, hostname bytes,
//   tcp count u8, each: family u8 (4|6), port u16, address (4 or 16 bytes),
//   hca count u8, each: device name length u8, device name bytes, gid 16 bytes,
//     port u8, lid u16, link layer u8, mtu u8, qp count u8, qpns u32 each
#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "wire/body_codec.h"
#include "wire/protocol.h"

namespace tent::wire {

using detail::invalid;
using detail::truncated;

namespace {

constexpr FrameType kBlob = AddressBlob::kType;

void encode_string(const std::string& s, ByteWriter& w) {
    w.u8(static_cast<uint8_t>(s.size()));
    w.bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

Status decode_string(ByteReader& r, std::string& s, const char* field) {
    uint8_t length = 0;
    std::span<const uint8_t> bytes;
    if (!(r.u8(length, field) && r.bytes(bytes, length, field))) return truncated(kBlob, r);
    s.assign(bytes.begin(), bytes.end());
    return Status::ok();
}

Status validate_token(const std::string& s, const std::string& what, size_t max) {
    if (s.empty() || s.size() > max)
        return invalid(kBlob, what + " length " + std::to_string(s.size()) + ", must be 1.." + std::to_string(max));
    if (!detail::is_printable_token(s)) return invalid(kBlob, what + " has non-printable characters");
    return Status::ok();
}

size_t address_size(uint8_t family) { return family == 4 ? 4 : 16; }

Status decode_tcp(ByteReader& r, TcpAddress& a) {
    std::span<const uint8_t> bytes;
    if (!(r.u8(a.family, "tcp family") && r.u16(a.port, "tcp port"))) return truncated(kBlob, r);
    if (a.family != 4 && a.family != 6)
        return invalid(kBlob, "tcp address family " + std::to_string(a.family) + ", must be 4 or 6");
    if (!r.bytes(bytes, address_size(a.family), "tcp address")) return truncated(kBlob, r);
    a.addr = {};
    std::copy(bytes.begin(), bytes.end(), a.addr.begin());
    return Status::ok();
}

Status validate_tcp(const TcpAddress& a, size_t index) {
    const std::string which = "tcp address " + std::to_string(index);
    if (a.family != 4 && a.family != 6)
        return invalid(kBlob, which + " family " + std::to_string(a.family) + ", must be 4 or 6");
    if (a.port == 0) return invalid(kBlob, which + " has port 0");
    const size_t n = address_size(a.family);
    if (std::any_of(a.addr.begin() + n, a.addr.end(), [](uint8_t b) { return b != 0; }))
        return invalid(kBlob, which + " is ipv4 but has bytes beyond the first 4");
    if (std::all_of(a.addr.begin(), a.addr.begin() + n, [](uint8_t b) { return b == 0; }))
        return invalid(kBlob, which + " is unspecified (all zero)");
    return Status::ok();
}

Status decode_hca(ByteReader& r, HcaAddress& h) {
    Status st = decode_string(r, h.device, "hca device name");
    if (!st) return st;
    std::span<const uint8_t> gid;
    uint8_t qp_count = 0;
    if (!(r.bytes(gid, h.gid.size(), "hca gid") && r.u8(h.port, "hca port") && r.u16(h.lid, "hca lid") &&
          r.u8(h.link_layer, "hca link layer") && r.u8(h.mtu, "hca mtu") && r.u8(qp_count, "hca qp count")))
        return truncated(kBlob, r);
    std::copy(gid.begin(), gid.end(), h.gid.begin());
    if (qp_count > kMaxQpsPerDevice)
        return invalid(kBlob, "hca " + h.device + " lists " + std::to_string(qp_count) + " qps, maximum " +
                                  std::to_string(kMaxQpsPerDevice));
    h.qpns.resize(qp_count);
    for (auto& qpn : h.qpns)
        if (!r.u32(qpn, "hca qpn")) return truncated(kBlob, r);
    return Status::ok();
}

Status validate_hca(const HcaAddress& h, size_t index) {
    Status st = validate_token(h.device, "hca " + std::to_string(index) + " device name", kMaxDeviceNameLength);
    if (!st) return st;
    const std::string which = "hca " + h.device + ":" + std::to_string(h.port);
    if (h.port == 0) return invalid(kBlob, "hca " + h.device + " has port 0 (ports start at 1)");
    if (h.link_layer != 1 && h.link_layer != 2)
        return invalid(kBlob, which + " link layer " + std::to_string(h.link_layer) + ", must be 1 (ib) or 2 (ethernet)");
    if (h.mtu < 1 || h.mtu > 5) return invalid(kBlob, which + " mtu " + std::to_string(h.mtu) + ", must be 1..5");
    if (h.qpns.size() > kMaxQpsPerDevice)
        return invalid(kBlob, which + " lists " + std::to_string(h.qpns.size()) + " qps, maximum " +
                                  std::to_string(kMaxQpsPerDevice));
    for (uint32_t qpn : h.qpns)
        if (qpn == 0 || qpn > kMaxQpn)
            return invalid(kBlob, which + " has qpn " + std::to_string(qpn) + ", must be 1.." + std::to_string(kMaxQpn));
    return Status::ok();
}

} // namespace

void encode_body(const AddressBlob& b, ByteWriter& w) {
    w.u64(b.engine_id);
    w.u8(b.version_min);
    w.u8(b.version_max);
    encode_string(b.hostname, w);
    w.u8(static_cast<uint8_t>(b.tcp.size()));
    for (const auto& a : b.tcp) {
        w.u8(a.family);
        w.u16(a.port);
        w.bytes(std::span<const uint8_t>(a.addr).first(address_size(a.family)));
    }
    w.u8(static_cast<uint8_t>(b.hcas.size()));
    for (const auto& h : b.hcas) {
        encode_string(h.device, w);
        w.bytes(h.gid);
        w.u8(h.port);
        w.u16(h.lid);
        w.u8(h.link_layer);
        w.u8(h.mtu);
        w.u8(static_cast<uint8_t>(h.qpns.size()));
        for (uint32_t qpn : h.qpns) w.u32(qpn);
    }
}

Status decode_body(ByteReader& r, AddressBlob& b) {
    if (!(r.u64(b.engine_id, "engine id") && r.u8(b.version_min, "version min") &&
          r.u8(b.version_max, "version max")))
        return truncated(kBlob, r);
    Status st = decode_string(r, b.hostname, "hostname");
    if (!st) return st;

    uint8_t count = 0;
    if (!r.u8(count, "tcp count")) return truncated(kBlob, r);
    if (count > kMaxTcpAddresses)
        return invalid(kBlob, std::to_string(count) + " tcp addresses, maximum " + std::to_string(kMaxTcpAddresses));
    b.tcp.resize(count);
    for (auto& a : b.tcp) {
        st = decode_tcp(r, a);
        if (!st) return st;
    }

    if (!r.u8(count, "hca count")) return truncated(kBlob, r);
    if (count > kMaxDevices)
        return invalid(kBlob, std::to_string(count) + " hcas, maximum " + std::to_string(kMaxDevices));
    b.hcas.resize(count);
    for (auto& h : b.hcas) {
        st = decode_hca(r, h);
        if (!st) return st;
    }
    return Status::ok();
}

Status validate_body(const AddressBlob& b) {
    if (b.engine_id == 0) return invalid(kBlob, "engine id 0");
    if (b.version_min == 0 || b.version_min > b.version_max)
        return invalid(kBlob, "bad version range " + std::to_string(b.version_min) + ".." +
                                  std::to_string(b.version_max));
    Status st = validate_token(b.hostname, "hostname", kMaxHostnameLength);
    if (!st) return st;
    if (b.tcp.size() > kMaxTcpAddresses)
        return invalid(kBlob, std::to_string(b.tcp.size()) + " tcp addresses, maximum " +
                                  std::to_string(kMaxTcpAddresses));
    if (b.hcas.size() > kMaxDevices)
        return invalid(kBlob, std::to_string(b.hcas.size()) + " hcas, maximum " + std::to_string(kMaxDevices));
    if (b.tcp.empty() && b.hcas.empty()) return invalid(kBlob, "no tcp address and no hca: peer unreachable");
    for (size_t i = 0; i < b.tcp.size(); ++i) {
        st = validate_tcp(b.tcp[i], i);
        if (!st) return st;
    }
    std::set<std::pair<std::string, uint8_t>> ports;
    for (size_t i = 0; i < b.hcas.size(); ++i) {
        st = validate_hca(b.hcas[i], i);
        if (!st) return st;
        if (!ports.emplace(b.hcas[i].device, b.hcas[i].port).second)
            return invalid(kBlob, "hca " + b.hcas[i].device + ":" + std::to_string(b.hcas[i].port) + " listed twice");
    }
    return Status::ok();
}

} // namespace tent::wire
