#include "wire/memory_handle.h"

#include <cstdio>
#include <limits>
#include <string>

#include "wire/byte_reader.h"
#include "wire/byte_writer.h"

namespace tent::wire {

namespace {

Status invalid(const std::string& why) { return Status(Code::InvalidArgument, "memory handle: " + why); }

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

bool wraps(uint64_t addr, uint64_t length) { return length > std::numeric_limits<uint64_t>::max() - addr; }

} // namespace

Status validate_memory_handle(const MemoryHandle& h) {
    if (h.access & ~kAccessAll) return invalid("unknown access bits " + hex(h.access & ~kAccessAll));
    if ((h.access & (kAccessRemoteWrite | kAccessRemoteAtomic)) && !(h.access & kAccessLocalWrite))
        return invalid("remote write or atomic access without local write");
    if (wraps(h.address, h.length))
        return invalid("range at " + hex(h.address) + " of " + std::to_string(h.length) +
                       " bytes wraps around the address space");
    if (h.rkeys.size() > kMaxDevices)
        return invalid(std::to_string(h.rkeys.size()) + " rkeys, maximum " + std::to_string(kMaxDevices));
    return Status::ok();
}

Result<std::array<uint8_t, kMemoryHandleSize>> encode_memory_handle(const MemoryHandle& h) {
    Status st = validate_memory_handle(h);
    if (!st) return st;
    std::vector<uint8_t> out;
    out.reserve(kMemoryHandleSize);
    ByteWriter w(out);
    w.u32(kMemoryHandleMagic);
    w.u8(kMemoryHandleVersion);
    w.u8(static_cast<uint8_t>(h.rkeys.size()));
    w.u16(h.access);
    w.u64(h.address);
    w.u64(h.length);
    w.u32(h.tcp_key);
    for (size_t i = 0; i < kMaxDevices; ++i) w.u32(i < h.rkeys.size() ? h.rkeys[i] : 0);
    std::array<uint8_t, kMemoryHandleSize> bytes{};
    std::copy(out.begin(), out.end(), bytes.begin());
    return bytes;
}

Status decode_memory_handle(std::span<const uint8_t> bytes, MemoryHandle& h) {
    if (bytes.size() != kMemoryHandleSize)
        return invalid(std::to_string(bytes.size()) + " bytes, expected " + std::to_string(kMemoryHandleSize));
    ByteReader r(bytes);
    uint32_t magic = 0;
    uint8_t version = 0, count = 0;
    h.rkeys.clear();
    // Cannot run short: the size was checked above.
    (void)(r.u32(magic, "magic") && r.u8(version, "version") && r.u8(count, "device count") &&
           r.u16(h.access, "access") && r.u64(h.address, "address") && r.u64(h.length, "length") &&
           r.u32(h.tcp_key, "tcp key"));
    if (magic != kMemoryHandleMagic)
        return invalid("bad magic " + hex(magic) + ", expected " + hex(kMemoryHandleMagic));
    if (version != kMemoryHandleVersion)
        return invalid("unsupported version " + std::to_string(version) + " (supported " +
                       std::to_string(kMemoryHandleVersion) + ")");
    if (count > kMaxDevices)
        return invalid(std::to_string(count) + " rkeys, maximum " + std::to_string(kMaxDevices));
    for (size_t i = 0; i < kMaxDevices; ++i) {
        uint32_t rkey = 0;
        (void)r.u32(rkey, "rkey");
        if (i < count)
            h.rkeys.push_back(rkey);
        else if (rkey != 0)
            return invalid("unused rkey slot " + std::to_string(i) + " is not zero");
    }
    return validate_memory_handle(h);
}

Status check_remote_access(const MemoryHandle& region, uint64_t addr, uint64_t length, uint16_t required) {
    const uint16_t missing = required & ~region.access;
    if (missing != 0)
        return Status(Code::RemoteAccess, "access " + hex(missing) + " not granted by the registration");
    const bool inside = addr >= region.address && !wraps(addr, length) &&
                        addr - region.address <= region.length &&
                        length <= region.length - (addr - region.address);
    if (!inside)
        return Status(Code::RemoteAccess, "range at " + hex(addr) + " of " + std::to_string(length) +
                                              " bytes outside the registration at " + hex(region.address) +
                                              " of " + std::to_string(region.length) + " bytes");
    return Status::ok();
}

} // namespace tent::wire
