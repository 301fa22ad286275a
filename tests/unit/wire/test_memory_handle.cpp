// Memory handles: fixed-size encoding that round-trips and rejects every
// malformed input, and the registration check a TCP rail applies in place
// of the HCA's.
#include <criterion/criterion.h>

#include <limits>
#include <string>

#include "wire/memory_handle.h"
#include "wire_samples.h"

using namespace wire_test;

namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

MemoryHandle sample_handle() {
    MemoryHandle h;
    h.address = 0x7f0012345000ull;
    h.length = 1 << 20;
    h.access = kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead;
    h.tcp_key = 0xCAFE;
    h.rkeys = {0x1111, 0x2222, 0x3333};
    return h;
}

std::vector<uint8_t> encoded(const MemoryHandle& h) {
    auto r = encode_memory_handle(h);
    cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
    return {r->begin(), r->end()};
}

void expect_rejected(const std::vector<uint8_t>& bytes, const std::string& reason) {
    MemoryHandle h;
    Status r = decode_memory_handle(bytes, h);
    cr_assert(!r.is_ok(), "accepted, expected '%s'", reason.c_str());
    cr_expect_eq(r.code(), Code::InvalidArgument);
    const std::string msg = r.message();
    cr_expect(contains(msg, reason), "message '%s' lacks '%s'", msg.c_str(), reason.c_str());
}

} // namespace

Test(memory_handle, round_trip_at_bounds) {
    MemoryHandle none;
    MemoryHandle full;
    full.address = kU64Max - 4096;
    full.length = 4096;
    full.access = kAccessAll;
    full.tcp_key = 0xFFFFFFFF;
    for (size_t i = 0; i < kMaxDevices; ++i) full.rkeys.push_back(0xFFFFFFF0u + static_cast<uint32_t>(i));
    for (const auto& h : {none, sample_handle(), full}) {
        auto bytes = encoded(h);
        cr_expect_eq(bytes.size(), kMemoryHandleSize);
        MemoryHandle back;
        Status st = decode_memory_handle(bytes, back);
        cr_assert(st.is_ok(), "%s", st.to_string().c_str());
        cr_expect(back == h);
    }
}

// The engine decodes a peer's handle into a pooled request's, which still
// holds the last request's: nothing of that one may remain.
Test(memory_handle, decoding_into_a_used_handle_replaces_all_of_it) {
    MemoryHandle used = sample_handle();
    used.rkeys.resize(kMaxDevices, 0x9999);
    MemoryHandle next;
    next.address = 0x1000;
    next.length = 64;
    next.access = kAccessLocalWrite | kAccessRemoteRead;
    next.tcp_key = 7;
    next.rkeys = {0x4444};
    Status st = decode_memory_handle(encoded(next), used);
    cr_assert(st.is_ok(), "%s", st.to_string().c_str());
    cr_expect(used == next, "%zu rkeys after decoding one", used.rkeys.size());
    cr_expect(!decode_memory_handle(std::vector<uint8_t>(kMemoryHandleSize - 1), used).is_ok());
}

Test(memory_handle, layout_on_the_wire) {
    auto b = encoded(sample_handle());
    cr_assert_eq(b.size(), 92u);
    cr_expect(b[0] == 'T' && b[1] == 'E' && b[2] == 'M' && b[3] == 'H');
    cr_expect_eq(b[4], 1);          // version
    cr_expect_eq(b[5], 3);          // rkeys
    cr_expect_eq(b[6], 0x7);        // access, low byte
    cr_expect_eq(b[8], 0x00);       // address, little-endian
    cr_expect_eq(b[9], 0x50);
    cr_expect_eq(b[13], 0x7f);
    cr_expect_eq(b[18], 0x10);      // length 1 MiB
    cr_expect_eq(b[24], 0xFE);      // tcp key
    cr_expect_eq(b[25], 0xCA);
    cr_expect_eq(b[28], 0x11);      // first rkey
    cr_expect_eq(b[36], 0x33);      // third rkey
    for (size_t i = 40; i < b.size(); ++i) cr_expect_eq(b[i], 0, "unused slot byte %zu", i);
}

Test(memory_handle, malformed_inputs) {
    const auto good = encoded(sample_handle());
    auto with = [&](size_t offset, uint8_t value) {
        auto b = good;
        b[offset] = value;
        return b;
    };
    expect_rejected({}, "memory handle: 0 bytes, expected 92");
    expect_rejected(std::vector<uint8_t>(good.begin(), good.end() - 1), "91 bytes, expected 92");
    auto longer = good;
    longer.push_back(0);
    expect_rejected(longer, "93 bytes, expected 92");
    expect_rejected(with(0, 'X'), "memory handle: bad magic");
    expect_rejected(with(4, 2), "memory handle: unsupported version 2");
    expect_rejected(with(5, 17), "memory handle: 17 rkeys, maximum 16");
    expect_rejected(with(50, 1), "memory handle: unused rkey slot 5 is not zero");
    expect_rejected(with(6, 0x17), "memory handle: unknown access bits 0x10");
    expect_rejected(with(6, kAccessRemoteWrite), "remote write or atomic access without local write");
    expect_rejected(with(6, kAccessRemoteAtomic | kAccessRemoteRead), "without local write");
    auto wrap = good;
    for (int i = 8; i < 16; ++i) wrap[i] = 0xFF; // address at the top, length 1 MiB
    expect_rejected(wrap, "memory handle: range at 0xffffffffffffffff of 1048576 bytes wraps around");
}

Test(memory_handle, encoder_refuses_invalid_handles) {
    MemoryHandle h = sample_handle();
    h.rkeys.resize(kMaxDevices + 1);
    cr_expect_eq(encode_memory_handle(h).status().code(), Code::InvalidArgument);
    h = sample_handle();
    h.access = kAccessRemoteWrite;
    cr_expect_eq(encode_memory_handle(h).status().code(), Code::InvalidArgument);
}

Test(memory_handle, remote_access_check_matches_an_hca) {
    MemoryHandle r;
    r.address = 0x1000;
    r.length = 0x100;
    r.access = kAccessLocalWrite | kAccessRemoteWrite;
    // Inside, including both edges and a zero-length access at the end.
    cr_expect(check_remote_access(r, 0x1000, 0x100, kAccessRemoteWrite).is_ok());
    cr_expect(check_remote_access(r, 0x10FF, 1, kAccessRemoteWrite).is_ok());
    cr_expect(check_remote_access(r, 0x1100, 0, kAccessRemoteWrite).is_ok());
    // Outside by one byte either side, past the end, wrapping.
    cr_expect_eq(check_remote_access(r, 0x0FFF, 1, kAccessRemoteWrite).code(), Code::RemoteAccess);
    cr_expect_eq(check_remote_access(r, 0x1000, 0x101, kAccessRemoteWrite).code(), Code::RemoteAccess);
    cr_expect_eq(check_remote_access(r, 0x1100, 1, kAccessRemoteWrite).code(), Code::RemoteAccess);
    cr_expect_eq(check_remote_access(r, 0x1080, kU64Max, kAccessRemoteWrite).code(), Code::RemoteAccess);
    cr_expect_eq(check_remote_access(r, kU64Max, 2, kAccessRemoteWrite).code(), Code::RemoteAccess);
    // Access not granted: reading a write-only region.
    Status st = check_remote_access(r, 0x1000, 8, kAccessRemoteRead);
    cr_expect_eq(st.code(), Code::RemoteAccess);
    const std::string msg = st.message();
    cr_expect(contains(msg, "access 0x4 not granted"), "%s", msg.c_str());
}
