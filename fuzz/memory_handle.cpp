// Fuzz target: memory handles, which a peer sends for its registered regions
// and the engine decodes before a one-sided operation. The first
// kMemoryHandleSize bytes are the handle; any further bytes give an access
// (address, length, required bits) for the target-side check.
#include <span>
#include <vector>

#include "fuzz_check.h"
#include "wire/memory_handle.h"

namespace {

std::uint64_t take_u64(std::span<const std::uint8_t>& rest, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n && !rest.empty(); ++i, rest = rest.subspan(1)) v |= std::uint64_t{rest[0]} << (8 * i);
    return v;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tent::wire;
    std::span<const std::uint8_t> bytes(data, size);
    // The whole input too: a handle of the wrong size is refused, not read.
    MemoryHandle handle;
    fuzz_require(size == kMemoryHandleSize || !decode_memory_handle(bytes, handle), "only a handle's size decodes");
    if (size < kMemoryHandleSize) return 0;
    if (!decode_memory_handle(bytes.first(kMemoryHandleSize), handle)) return 0;
    auto again = encode_memory_handle(handle);
    fuzz_require(again.is_ok(), "a decoded handle encodes");
    fuzz_require(std::equal(again->begin(), again->end(), bytes.begin()), "a decoded handle re-encodes to the same bytes");
    auto rest = bytes.subspan(kMemoryHandleSize);
    const std::uint64_t addr = take_u64(rest, 8), length = take_u64(rest, 8);
    const auto required = static_cast<std::uint16_t>(take_u64(rest, 2));
    if (check_remote_access(handle, addr, length, required)) {
        fuzz_require((required & ~handle.access) == 0, "an allowed access is granted by the handle");
        fuzz_require(addr >= handle.address && addr - handle.address <= handle.length &&
                         length <= handle.length - (addr - handle.address),
                     "an allowed access lies inside the region");
    }
    return 0;
}
