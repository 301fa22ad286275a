// Fuzz target: frames of the TCP data path (writes, reads, sends, atomics and
// their answers), decoded as a TCP rail does, and the target-side check a
// rail then applies before touching memory: whatever it lets through lies
// inside the registered region.
#include <limits>

#include "frame_check.h"
#include "wire/memory_handle.h"

namespace {

using namespace tent::wire;

void check_access(std::uint64_t addr, std::uint64_t length, std::uint16_t required) {
    // A region near the top of the address space, so that wrap-around counts.
    static const MemoryHandle region{std::numeric_limits<std::uint64_t>::max() - 0xFFFF, 0x8000, kAccessAll, 7, {1}};
    if (!check_remote_access(region, addr, length, required)) return;
    fuzz_require(addr >= region.address && addr - region.address <= region.length &&
                     length <= region.length - (addr - region.address),
                 "an access the check allows lies inside the region");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static constexpr FrameType kData[] = {FrameType::Write, FrameType::ReadRequest, FrameType::ReadResponse,
                                          FrameType::Send,  FrameType::Ack,         FrameType::Nack,
                                          FrameType::Atomic, FrameType::AtomicResponse};
    auto bytes = with_type_among(std::span<const std::uint8_t>(data, size), kData);
    auto frame = check_frame_bytes(bytes);
    if (!frame) return 0;
    if (auto* w = std::get_if<Write>(&frame->body)) check_access(w->remote_addr, w->data.size(), kAccessRemoteWrite);
    if (auto* r = std::get_if<ReadRequest>(&frame->body)) check_access(r->remote_addr, r->length, kAccessRemoteRead);
    if (auto* a = std::get_if<Atomic>(&frame->body)) check_access(a->remote_addr, 8, kAccessRemoteAtomic);
    return 0;
}
